// E2E helpers: an in-process emulator per test, the built CLI aimed at it, temp manifests, direct API calls.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ApiKeySpec,
  type EmulatorData,
  exampleData,
  type FaultOptions,
  type ProfileName,
  type RunningEmulator,
  type StoredRecord,
  startEmulator,
} from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import { type CliRun, runBuiltCli } from "./cli.js";

export const REPOSITORY = fileURLToPath(new URL("../../", import.meta.url));
export const EXAMPLES = join(REPOSITORY, "examples");

/** A recognisable key: no output of any command may contain it. */
export const API_KEY = "phx_e2e_secret_key_4f1d2c3b5a69788";

export const PC: FamilyName = "plugin_configs";
export const FE: FamilyName = "pipeline_frontend_apps_configs";

export interface RemoteRecord {
  id: number;
  name: string | null;
  plugin: number;
  enabled: boolean;
  order: number;
  description: string | null;
  deleted: boolean;
}

export interface TestServer {
  emulator: RunningEmulator;
  /** The environment a user would set: base URL and key. */
  env: NodeJS.ProcessEnv;
  /** Runs the built CLI against this server, in `cwd` (default: the repository). */
  run(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun>;
  /** Calls the API directly, as another user or tool would. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** The family's list (all pages), as a client sees it. */
  list(project: number | string, family: FamilyName): Promise<RemoteRecord[]>;
  close(): Promise<void>;
}

export async function startServer(
  profile: ProfileName,
  options: { data?: EmulatorData; faults?: FaultOptions; key?: Omit<ApiKeySpec, "key"> } = {},
): Promise<TestServer> {
  const emulator = await startEmulator({
    profile,
    keys: [{ key: API_KEY, ...(options.key ?? { scopes: null, projects: "*" }) }],
    ...(options.data === undefined ? {} : { data: options.data }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
  });
  const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: API_KEY };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${emulator.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${API_KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) };
  };
  return {
    emulator,
    env,
    run: (args, runOptions = {}) =>
      runBuiltCli(args, {
        cwd: runOptions.cwd ?? REPOSITORY,
        env: { ...env, ...runOptions.env },
      }),
    call,
    async list(project, family) {
      // Faults may be on: reads are retried here as the CLI would.
      for (let attempt = 0; ; attempt++) {
        const { status, body } = await call("GET", `/api/projects/${project}/${family}/?limit=1000`);
        if (status === 200) return (body as { results: RemoteRecord[] }).results;
        if (attempt >= 20) throw new Error(`listing ${family} of project ${project}: ${status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => emulator.close(),
  };
}

/** How a test registers cleanup: the test context's `onTestFinished` (safe in concurrent tests). */
export type OnFinished = (handler: () => Promise<void>) => void;

/** A server of its own for one test, closed when the test ends. */
export async function openServer(
  onFinished: OnFinished,
  ...args: Parameters<typeof startServer>
): Promise<TestServer> {
  const server = await startServer(...args);
  onFinished(() => server.close());
  return server;
}

/** A temporary directory for manifests and plan files, removed by the returned function. */
export async function makeWorkDir(): Promise<{ dir: string; write: WriteFile; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "pcsync-e2e-"));
  let written = 0;
  return {
    dir,
    write: async (name, content) => {
      // Tests run concurrently: a name of their own keeps one from reading another's half-written file.
      const path = join(dir, `${++written}-${name}`);
      await writeFile(path, content);
      return path;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export type WriteFile = (name: string, content: string) => Promise<string>;

/** A YAML manifest from lines, so that tests can name the line a config starts on. */
export function manifest(...lines: string[]): string {
  return `${lines.join("\n")}\n`;
}

const STAMP = "2024-06-01T00:00:00.000Z";

/** The example data plus the given records (ids from 100 up unless given). */
export function dataWith(
  records: (Pick<StoredRecord, "project" | "family" | "plugin" | "order" | "name"> &
    Partial<Pick<StoredRecord, "id" | "enabled" | "description">>)[],
): EmulatorData {
  const data = exampleData();
  let next = 100;
  for (const record of records) {
    const id = record.id ?? next++;
    data.records.push({
      enabled: true,
      description: null,
      deleted: false,
      match_action: null,
      config: "{}",
      error: null,
      delivery_rate_24h: null,
      created_at: STAMP,
      updated_at: STAMP,
      ...record,
      id,
    });
    next = Math.max(next, id + 1);
  }
  data.nextIds.record = next;
  return data;
}

/** Records whose text must never show: the key itself, and bearer headers. */
export function expectNoSecret(run: CliRun): void {
  for (const text of [run.stdout, run.stderr]) {
    if (text.includes(API_KEY)) throw new Error(`output contains the API key:\n${text}`);
  }
}

/** No stack trace in user-facing output. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+:\d+:\d+\)?/.test(text);
}
