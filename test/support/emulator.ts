// Test helpers: start an emulator on port 0 and talk to it with plain fetch, the way any client would.

import { afterEach } from "vitest";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";

export const ALL_ACCESS = "key-all";
export const READ_ONLY = "key-read";
export const WRITE_ONLY = "key-write";
export const LEGACY = "key-legacy";
export const PROJECT_2_ONLY = "key-project-2";
export const NO_SCOPES = "key-none";

export const TEST_KEYS = [
  { key: ALL_ACCESS, scopes: ["*"], projects: "*" },
  { key: READ_ONLY, scopes: ["plugin:read"], projects: "*" },
  { key: WRITE_ONLY, scopes: ["plugin:write"], projects: "*" },
  { key: LEGACY, scopes: null, projects: "*" },
  { key: PROJECT_2_ONLY, scopes: ["*"], projects: [2] },
  { key: NO_SCOPES, scopes: [], projects: "*" },
] satisfies EmulatorOptions["keys"];

const running: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.close()));
});

/** Starts an emulator closed automatically after the test; test keys unless `keys` is given. */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<Client> {
  const emulator = await startEmulator({ keys: TEST_KEYS, ...options });
  running.push(emulator);
  return new Client(emulator);
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  body: unknown;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body string, sent as is. */
  rawBody?: string;
  /** The bearer key; null sends no Authorization header. */
  key?: string | null;
  headers?: Record<string, string>;
}

export class Client {
  readonly emulator: RunningEmulator;
  key: string = ALL_ACCESS;

  constructor(emulator: RunningEmulator) {
    this.emulator = emulator;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? this.key : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(`${this.emulator.url}${path}`, { method, headers, body: body ?? null });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  get(path: string, options?: RequestOptions): Promise<Reply> {
    return this.request("GET", path, options);
  }

  post(path: string, body: unknown, options: RequestOptions = {}): Promise<Reply> {
    return this.request("POST", path, { ...options, body });
  }

  patch(path: string, body: unknown, options: RequestOptions = {}): Promise<Reply> {
    return this.request("PATCH", path, { ...options, body });
  }

  delete(path: string, options?: RequestOptions): Promise<Reply> {
    return this.request("DELETE", path, options);
  }
}

/** Narrows a reply body to an object for property access in assertions. */
export function obj(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error(`expected a JSON object, got ${JSON.stringify(body)}`);
  }
  return body as Record<string, unknown>;
}

export function list(body: unknown): Record<string, unknown>[] {
  if (!Array.isArray(body)) throw new Error(`expected a JSON array, got ${JSON.stringify(body)}`);
  return body as Record<string, unknown>[];
}

export interface PageBody {
  count: number;
  next: string | null;
  previous: string | null;
  results: Record<string, unknown>[];
}

export function page(body: unknown): PageBody {
  const value = obj(body);
  return value as unknown as PageBody;
}

export function errorBody(type: string, code: string, detail: string, attr: string | null = null) {
  return { type, code, detail, attr };
}
