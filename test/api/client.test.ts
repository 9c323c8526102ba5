import { createRecord } from "../support/builders.js";
// The client against a scripted node:http server: what it sends, how it retries, how it fails.

import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createJob,
  deleteConfig,
  getConfig,
  getFrontend,
  listAllConfigs,
  listLogs,
  rearrangeConfigs,
  type ServiceError,
  updateConfig,
} from "../../src/api/index.js";
import type { PcsyncError } from "../../src/errors.js";
import {
  page,
  record,
  type ScriptedServer,
  sendEmpty,
  sendJson,
  startScriptedServer,
  TEST_KEY,
  testClient,
} from "../support/scripted-server.js";

let server: ScriptedServer;
const clients: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  server = await startScriptedServer();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await server.close();
});

function makeClient(overrides: Parameters<typeof testClient>[1] = {}, baseUrl = server.url) {
  const made = testClient(baseUrl, overrides);
  clients.push(made.client);
  return made;
}

describe("requests", () => {
  it("sends bearer auth, JSON bodies and trailing-slash paths under the base URL's prefix", async () => {
    server.setHandler((request, response) =>
      sendJson(response, 200, record(7, JSON.parse(request.body || "{}"))),
    );
    const { client } = makeClient({}, `${server.url}/svc/`);
    await updateConfig(client, "1", "pipeline_frontend_apps_configs", 7, { enabled: false });
    const [sent] = server.requests;
    expect(sent?.method).toBe("PATCH");
    expect(sent?.url).toBe("/svc/api/projects/1/pipeline_frontend_apps_configs/7/");
    expect(sent?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(sent?.body ?? "")).toEqual({ enabled: false });
  });

  it("lists a family of up to pageSize records in one request", async () => {
    const records = Array.from({ length: 1000 }, (_, index) => record(index + 1));
    server.setHandler((_request, response) => sendJson(response, 200, page(records)));
    const { client } = makeClient();
    const listed = await listAllConfigs(client, "1", "plugin_configs");
    expect(listed).toHaveLength(1000);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/api/projects/1/plugin_configs/?limit=1000",
    ]);
    expect(client.stats.requests).toBe(1);
    expect(client.stats.responsesByStatus[200]).toBe(1);
  });

  it("encodes project ids as one path segment and refuses ids that would name another path", async () => {
    server.setHandler((_request, response) => sendJson(response, 200, page([])));
    const { client } = makeClient();
    await listAllConfigs(client, "a/b?c", "plugin_configs");
    expect(server.requests[0]?.url).toBe("/api/projects/a%2Fb%3Fc/plugin_configs/?limit=1000");
    for (const bad of ["", ".", "..", "1\n2", "1\u0000"]) {
      await expect(getConfig(client, bad, "plugin_configs", 1)).rejects.toMatchObject({
        code: "invalid_project_id",
      });
    }
    expect(server.requests).toHaveLength(1);
  });

  it("returns the frontend module as text, and a job's empty 200 body as null", async () => {
    server.setHandler((request, response) => {
      if (request.url.endsWith("/frontend/")) {
        response.writeHead(200, { "content-type": "application/javascript; charset=UTF-8" });
        response.end("export function getFrontendApp() { return {} }");
      } else sendEmpty(response, 200);
    });
    const { client } = makeClient();
    expect(await getFrontend(client, "1", "plugin_configs", 3)).toContain("getFrontendApp");
    expect(
      await createJob(client, "1", "plugin_configs", 3, { type: "Export", payload: { a: 1 } }),
    ).toBeNull();
    expect(JSON.parse(server.requests[1]?.body ?? "")).toEqual({
      job: { type: "Export", payload: { a: 1 } },
    });
  });

  it("sends rearrange as {orders} and returns the bare array", async () => {
    server.setHandler((_request, response) => sendJson(response, 200, [record(1), record(2)]));
    const { client } = makeClient();
    const records = await rearrangeConfigs(client, "1", "plugin_configs", { "1": 2, "2": 1 });
    expect(records.map((entry) => entry.id)).toEqual([1, 2]);
    expect(server.requests[0]?.url).toBe("/api/projects/1/plugin_configs/rearrange/");
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ orders: { "1": 2, "2": 1 } });
  });

  it("puts log filters in the query, type_filter repeated, and refuses logs of the other family", async () => {
    server.setHandler((_request, response) => sendJson(response, 200, page([])));
    const { client } = makeClient();
    await listLogs(client, "1", "plugin_configs", 5, {
      limit: 10,
      typeFilter: ["ERROR", "WARN"],
      search: "a b",
      after: new Date("2024-06-01T00:00:00Z"),
    });
    expect(server.requests[0]?.url).toBe(
      "/api/projects/1/plugin_configs/5/logs/?limit=10&type_filter=ERROR&type_filter=WARN&search=a+b&after=2024-06-01T00%3A00%3A00.000Z",
    );
    await expect(listLogs(client, "1", "pipeline_frontend_apps_configs", 5)).rejects.toMatchObject({
      code: "logs_not_supported",
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe("errors", () => {
  it("turns a service error into ApiError with the service's fields and a one-line message", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 400, {
        type: "validation_error",
        code: "does_not_exist",
        detail: 'Invalid pk "99" - object does not exist.',
        attr: "plugin",
      }),
    );
    const { client } = makeClient();
    const error = await createRecord(
      client,
      "1",
      "plugin_configs",
      { plugin: 99, order: 1 },
      { knownIds: new Set() },
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "api_error" });
    const apiError = error as ServiceError;
    expect(apiError.message).toBe(
      '400 POST /api/projects/1/plugin_configs/: plugin: Invalid pk "99" - object does not exist.',
    );
    expect(apiError).toMatchObject({ status: 400, method: "POST", code: "api_error", exitCode: 1 });
    expect(apiError.serviceError).toEqual({
      type: "validation_error",
      code: "does_not_exist",
      detail: 'Invalid pk "99" - object does not exist.',
      attr: "plugin",
    });
  });

  it("leaves out the attr prefix when attr is null, and falls back to the status text", async () => {
    const { client } = makeClient();
    server.setHandler((_request, response) =>
      sendJson(response, 404, {
        type: "invalid_request",
        code: "not_found",
        detail: "Not found.",
        attr: null,
      }),
    );
    await expect(getConfig(client, "1", "plugin_configs", 9)).rejects.toThrow(
      /^404 GET \/api\/projects\/1\/plugin_configs\/9\/: Not found\.$/,
    );
    server.setHandler((_request, response) => {
      response.writeHead(500, { "content-type": "text/html" });
      response.end("<html>oops</html>");
    });
    await expect(getConfig(client, "1", "plugin_configs", 9)).rejects.toThrow(
      "500 GET /api/projects/1/plugin_configs/9/: Internal Server Error",
    );
  });

  it("reports a body that is not JSON, and the first field of the wrong type", async () => {
    const { client } = makeClient();
    server.setHandler((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<!DOCTYPE html><p>login</p>");
    });
    const notJson = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(notJson).toMatchObject({ code: "malformed_response" });
    expect((notJson as Error).message).toContain(
      "GET /api/projects/1/plugin_configs/1/: malformed response: not JSON",
    );

    const records = [record(1), record(2), record(3), record(4, { enabled: "yes" })];
    server.setHandler((_request, response) => sendJson(response, 200, page(records)));
    const wrongType = await listAllConfigs(client, "1", "plugin_configs").catch((caught: unknown) => caught);
    expect(wrongType).toMatchObject({ code: "malformed_response" });
    expect((wrongType as ServiceError<"malformed_response">).facts.problem).toBe(
      "results[3].enabled: must be boolean",
    );

    server.setHandler((_request, response) => sendJson(response, 200, { ...record(1), id: undefined }));
    await expect(getConfig(client, "1", "plugin_configs", 1)).rejects.toThrow("id: is missing");
  });

  it("accepts computed fields of any type and extra fields", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 200, record(1, { config: { a: 1 }, plugin_info: null, error: 3, extra: [1] })),
    );
    const { client } = makeClient();
    expect((await getConfig(client, "1", "plugin_configs", 1)).config).toEqual({ a: 1 });
  });

  it("bounds the memory of a huge response", async () => {
    server.setHandler((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 100 && response.write(chunk)) sent += 1;
        if (sent < 100) response.once("drain", pump);
        else response.end();
      };
      pump();
    });
    const { client } = makeClient({ maxResponseBytes: 256 * 1024 });
    const error = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "response_too_large" });
    expect((error as Error).message).toContain("larger than the 256 KiB limit");
    expect(server.requests).toHaveLength(1);
  });

  it("times out a slow body and a missing response, retrying GETs first", async () => {
    server.setHandler((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"id": 1,');
      // ...and never the rest.
    });
    const { client } = makeClient({ bodyTimeoutMs: 150, retry: { retries: 1 } });
    const slowBody = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(slowBody).toMatchObject({ code: "timeout" });
    expect((slowBody as ServiceError<"timeout">).facts.phase).toBe("body");
    expect((slowBody as Error).message).toMatch(/response body not complete within 150 ms, after 2 attempts/);
    expect(server.requests).toHaveLength(2);

    server.setHandler(() => {
      // No answer at all.
    });
    const { client: impatient } = makeClient({ requestTimeoutMs: 150, retry: { retries: 0 } });
    const noAnswer = await getConfig(impatient, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(noAnswer).toMatchObject({ code: "timeout" });
    expect((noAnswer as Error).message).toMatch(/no response within 150 ms, after 1 attempt$/);
  });

  it("says how many attempts a refused connection got", async () => {
    const closed = await startScriptedServer();
    const url = closed.url;
    await closed.close();
    const { client, sleeps } = makeClient({ retry: { retries: 2 } }, url);
    const error = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "network_error" });
    expect((error as ServiceError<"network_error">).facts.reason).toBe("ECONNREFUSED");
    expect((error as Error).message).toContain("after 3 attempts");
    expect(sleeps).toHaveLength(2);
  });
});

describe("retries", () => {
  it("retries 502/503/504 and dropped connections on GET with capped full-jitter backoff", async () => {
    let calls = 0;
    server.setHandler((_request, response) => {
      calls += 1;
      if (calls === 1) return sendJson(response, 503, { detail: "busy" });
      if (calls === 2) {
        response.socket?.destroy();
        return;
      }
      if (calls === 3) return sendJson(response, 504, {});
      sendJson(response, 200, record(1));
    });
    const { client, sleeps } = makeClient({ retry: { retries: 4, baseDelayMs: 100, maxDelayMs: 300 } });
    expect((await getConfig(client, "1", "plugin_configs", 1)).id).toBe(1);
    // random() is 0.5: half of min(cap, base * 2^n).
    expect(sleeps).toEqual([50, 100, 150]);
    expect(client.stats).toMatchObject({ requests: 4, retries: 3, transportFailures: 1 });
  });

  it("gives up after the configured retries with the last status", async () => {
    server.setHandler((_request, response) => sendJson(response, 503, { detail: "Service unavailable" }));
    const { client } = makeClient({ retry: { retries: 2 } });
    await expect(getConfig(client, "1", "plugin_configs", 1)).rejects.toThrow(
      "503 GET /api/projects/1/plugin_configs/1/: Service unavailable (gave up after 3 attempts)",
    );
    expect(server.requests).toHaveLength(3);
  });

  it("waits the Retry-After header on 429, in seconds or as a date", async () => {
    let calls = 0;
    server.setHandler((_request, response) => {
      calls += 1;
      if (calls === 1) return sendJson(response, 429, { detail: "slow down" }, { "retry-after": "2" });
      if (calls === 2) {
        return sendJson(response, 429, {}, { "retry-after": new Date(Date.now() + 5_000).toUTCString() });
      }
      sendJson(response, 200, record(1));
    });
    const { client, sleeps } = makeClient();
    await getConfig(client, "1", "plugin_configs", 1);
    // The wait runs from when the 429 arrived, so a millisecond may already have passed.
    expect(sleeps[0]).toBeGreaterThan(1_900);
    expect(sleeps[0]).toBeLessThanOrEqual(2_000);
    expect(sleeps[1]).toBeGreaterThan(3_000);
    expect(sleeps[1]).toBeLessThanOrEqual(5_000);
    expect(client.stats.throttled).toBe(2);
  });

  it("reads the wait from the body when a 429 has no Retry-After", async () => {
    let calls = 0;
    server.setHandler((_request, response) => {
      calls += 1;
      if (calls === 1) {
        return sendJson(response, 429, {
          type: "throttled_error",
          code: "throttled",
          detail: "Request was throttled. Expected available in 3 seconds.",
          attr: null,
        });
      }
      sendJson(response, 200, record(1));
    });
    const { client, sleeps, trace } = makeClient();
    await getConfig(client, "1", "plugin_configs", 1);
    // Measured from the 429's arrival: a millisecond may already have passed.
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(2_900);
    expect(sleeps[0]).toBeLessThanOrEqual(3_000);
    expect(trace.some((line) => line.includes("throttled; retry 1/8 in 3000 ms"))).toBe(true);
  });

  it("retries a POST refused with 429, since it was not processed", async () => {
    let calls = 0;
    server.setHandler((request, response) => {
      calls += 1;
      if (calls === 1) return sendJson(response, 429, { detail: "Expected available in 1 seconds." });
      sendJson(response, 201, record(5, JSON.parse(request.body)));
    });
    const { client } = makeClient();
    const created = await createRecord(
      client,
      "1",
      "plugin_configs",
      { plugin: 12, order: 1, name: "A" },
      { knownIds: new Set() },
    );
    expect(created.id).toBe(5);
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(2);
  });

  it("fails at once when the service asks to wait longer than maxRetryAfterMs, and sends nothing more", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 429, { detail: "Request was throttled. Expected available in 1800 seconds." }),
    );
    const { client } = makeClient();
    const error = (await getConfig(client, "1", "plugin_configs", 1).catch(
      (caught: unknown) => caught,
    )) as ServiceError;
    expect(error.status).toBe(429);
    // Not "wait a little": the service named a time half an hour away.
    expect(error.hint).toMatch(
      /^The service throttled this key until \S+Z \(its hourly rate limit spent\?\): run again after then\.$/,
    );
    expect(server.requests).toHaveLength(1);
    // The wait it refused pauses nobody, and sends nothing more: the next request of the same client
    // fails at once, unsent, saying until when (test/api/retry.test.ts: and goes out after then).
    server.setHandler((_request, response) => sendJson(response, 200, record(1)));
    const started = Date.now();
    const next = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(next).toMatchObject({ code: "request_throttled" });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });

  it("takes a redirect after a POST as the answer: one re-read, never sent again", async () => {
    server.setHandler((request, response) => {
      if (request.method === "POST") {
        response.writeHead(303, { location: "/elsewhere/" }).end();
        return;
      }
      sendJson(response, 200, { count: 0, next: null, previous: null, results: [] });
    });
    const { client } = makeClient();
    const error = await createRecord(
      client,
      "1",
      "plugin_configs",
      { plugin: 12, order: 1, name: "A" },
      { knownIds: new Set() },
    ).catch((caught: unknown) => caught);
    expect((error as PcsyncError).message).toContain(
      "the service answered with a redirect, which pcsync does not follow, and re-reading the family found no record made by it",
    );
    expect(server.requests.map((request) => request.method)).toEqual(["POST", "GET"]);
  });

  it("counts a DELETE that gets 404 after a dropped attempt as done", async () => {
    let calls = 0;
    server.setHandler((_request, response) => {
      calls += 1;
      if (calls === 1) {
        response.socket?.destroy();
        return;
      }
      sendJson(response, 404, {
        type: "invalid_request",
        code: "not_found",
        detail: "Not found.",
        attr: null,
      });
    });
    const { client } = makeClient();
    await expect(deleteConfig(client, "1", "plugin_configs", 4)).resolves.toBeUndefined();
    expect(server.requests.map((request) => request.method)).toEqual(["DELETE", "DELETE"]);
  });

  it("still reports a first-attempt 404 on DELETE", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 404, {
        type: "invalid_request",
        code: "not_found",
        detail: "Not found.",
        attr: null,
      }),
    );
    const { client } = makeClient();
    await expect(deleteConfig(client, "1", "plugin_configs", 4)).rejects.toMatchObject({ code: "api_error" });
  });
});

describe("creates that may have happened", () => {
  function createScript(dropFirst: number, commitDropped: boolean) {
    const stored: Array<Record<string, unknown>> = [record(1, { name: "existing" })];
    let posts = 0;
    server.setHandler((request, response) => {
      if (request.method === "GET") return sendJson(response, 200, page(stored));
      posts += 1;
      const created = record(100 + posts, JSON.parse(request.body));
      if (posts <= dropFirst) {
        if (commitDropped) stored.push(created);
        response.socket?.destroy();
        return;
      }
      stored.push(created);
      sendJson(response, 201, created);
    });
    return stored;
  }

  it("finds the record a dropped POST created instead of creating it again", async () => {
    const stored = createScript(1, true);
    const { client } = makeClient();
    const created = await createRecord(
      client,
      "1",
      "plugin_configs",
      { plugin: 12, order: 2, name: "New" },
      {
        knownIds: new Set([1]),
      },
    );
    expect(created).toMatchObject({ id: 101, name: "New" });
    expect(stored).toHaveLength(2);
    expect(server.requests.map((request) => request.method)).toEqual(["POST", "GET"]);
  });

  it("sends the POST again only when re-reading over the settle window shows it did not happen", async () => {
    const stored = createScript(1, false);
    const { client, sleeps } = makeClient();
    const created = await createRecord(client, "1", "plugin_configs", { plugin: 12, order: 2, name: "New" });
    expect(created).toMatchObject({ id: 102, name: "New" });
    expect(stored).toHaveLength(2);
    // Read the known ids first (none given), POST dropped, re-reads, POST again.
    const methods = server.requests.map((request) => request.method);
    expect(methods.slice(0, 2)).toEqual(["GET", "POST"]);
    expect(methods.slice(2, -1).every((method) => method === "GET")).toBe(true);
    expect(methods.at(-1)).toBe("POST");
    // The window is two and a half times the 2 s request timeout, waited out before the resend.
    expect(sleeps.reduce((total, ms) => total + ms, 0)).toBe(5_000);
  });

  it("treats a 503 on POST as maybe-processed too", async () => {
    let posts = 0;
    server.setHandler((request, response) => {
      if (request.method === "GET") return sendJson(response, 200, page([]));
      posts += 1;
      if (posts === 1) return sendJson(response, 503, { detail: "unavailable" });
      sendJson(response, 201, record(9, JSON.parse(request.body)));
    });
    const { client } = makeClient();
    const created = await createRecord(
      client,
      "1",
      "plugin_configs",
      { plugin: 12, order: 1, name: "X" },
      { knownIds: new Set() },
    );
    expect(created.id).toBe(9);
    const methods = server.requests.map((request) => request.method);
    expect(methods[0]).toBe("POST");
    expect(methods.slice(1, -1).length).toBeGreaterThan(1);
    expect(methods.slice(1, -1).every((method) => method === "GET")).toBe(true);
    expect(methods.at(-1)).toBe("POST");
  });

  it("never repeats a job whose POST may have run", async () => {
    server.setHandler((_request, response) => {
      response.socket?.destroy();
    });
    const { client } = makeClient();
    const error = await createJob(client, "1", "plugin_configs", 3, { type: "Export" }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "job_outcome_unknown" });
    expect((error as Error).message).toContain("may or may not have run");
    expect(server.requests).toHaveLength(1);
  });
});

describe("the key stays secret", () => {
  it("keeps what the service echoes as sent, but inspect and JSON of the error redact it", async () => {
    server.setHandler((request, response) =>
      sendJson(response, 401, {
        type: "authentication_error",
        code: "authentication_failed",
        detail: `Personal API key ${request.headers.authorization} is invalid.`,
        attr: `${TEST_KEY}`,
      }),
    );
    const { client, trace } = makeClient();
    const error = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "api_error" });
    // Data, not output: code compares the service's detail, so it is kept as the service sent it.
    expect((error as ServiceError).serviceError?.attr).toBe(TEST_KEY);
    const shown = [
      inspect(error),
      inspect(error, { depth: 10, showHidden: true }),
      inspect({ wrapped: error }, { depth: 10 }),
      inspect(new Error("outer", { cause: error }), { depth: 10 }),
      JSON.stringify(error),
      JSON.stringify({ wrapped: error }),
      inspect(client, { depth: 10, showHidden: true }),
      ...trace,
    ];
    for (const text of shown) expect(text).not.toContain(TEST_KEY);
    expect(inspect(error)).toContain("[REDACTED]");
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: "ServiceError",
      code: "api_error",
      status: 401,
      serviceError: { attr: "[REDACTED]" },
    });
    expect(trace.length).toBeGreaterThan(0);
  });

  it("never cuts an excerpt of a non-JSON error body inside the key", async () => {
    // The key straddles the 200-character cut of the excerpt: a cut key would not be recognised.
    server.setHandler((request, response) => {
      response.writeHead(502, { "content-type": "text/plain" });
      response.end(`${"x".repeat(170)} rejected ${request.headers.authorization} and more text`);
    });
    const { client } = makeClient({ retry: { retries: 0 } });
    const error = await getConfig(client, "1", "plugin_configs", 1).catch((caught: unknown) => caught);
    expect((error as Error).message).toContain(`rejected Bearer ${TEST_KEY}...`);
  });
});
