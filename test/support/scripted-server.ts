// A real node:http server on port 0 whose answers each test scripts, recording every request
// (headers included) so tests can check what the client sent and where.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiClient, type ApiClientOptions } from "../../src/api/index.js";

export interface RecordedRequest {
  method: string;
  /** Path and query string as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (
  request: RecordedRequest,
  response: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

export interface ScriptedServer {
  url: string;
  requests: RecordedRequest[];
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

export async function startScriptedServer(
  initial: Handler = (_request, response) => sendJson(response, 404, {}),
) {
  let handler = initial;
  const requests: RecordedRequest[] = [];
  const server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on("data", (chunk: Buffer) => chunks.push(chunk));
    raw.on("end", () => {
      const request = {
        method: raw.method ?? "",
        url: raw.url ?? "",
        headers: raw.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(request);
      Promise.resolve(handler(request, response, raw)).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const scripted: ScriptedServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return scripted;
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

export function sendEmpty(response: ServerResponse, status: number): void {
  response.writeHead(status, { "content-length": "0" });
  response.end();
}

export const TEST_KEY = "phx_test_SECRET_4f9a2c1d8e";

export function record(id: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    plugin: 12,
    enabled: true,
    order: id,
    name: `config ${id}`,
    description: null,
    deleted: false,
    match_action: null,
    config: "{}",
    team_id: 1,
    created_at: "2024-06-01T00:00:00Z",
    ...fields,
  };
}

export function page(results: unknown[], next: string | null = null, count = results.length) {
  return { count, next, previous: null, results };
}

/** A client with no real waiting: sleeps are recorded and resolve at once. */
export function testClient(
  baseUrl: string,
  overrides: Partial<ApiClientOptions> = {},
): { client: ApiClient; sleeps: number[]; trace: string[] } {
  const sleeps: number[] = [];
  const trace: string[] = [];
  const client = new ApiClient({
    baseUrl,
    apiKey: TEST_KEY,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    trace: (line) => trace.push(line),
    requestTimeoutMs: 2_000,
    bodyTimeoutMs: 2_000,
    ...overrides,
  });
  return { client, sleeps, trace };
}

/**
 * Answers a list request with limit/offset paging over `items` as the service does: `count` is
 * the whole list's, `next` an absolute link to the following page (null on the last).
 */
export function sendListPage(
  response: ServerResponse,
  serverUrl: string,
  requestUrl: string,
  items: readonly unknown[],
): void {
  const url = new URL(requestUrl, serverUrl);
  const limit = Number(url.searchParams.get("limit") ?? 100);
  const offset = Number(url.searchParams.get("offset") ?? 0);
  let next: string | null = null;
  if (offset + limit < items.length) {
    const link = new URL(url.href);
    link.searchParams.set("offset", String(offset + limit));
    next = link.href;
  }
  sendJson(response, 200, page(items.slice(offset, offset + limit), next, items.length));
}
