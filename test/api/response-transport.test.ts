import { createRecord } from "../support/builders.js";
// What the transport does with answers that are not plain bodies: compressed ones (inflated within
// the memory bound), redirects (never followed), and headers past the HTTP parser's limit.

import type { ServerResponse } from "node:http";
import { inspect } from "node:util";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listAllConfigs, ServiceError } from "../../src/api/index.js";
import { SecretRegistry } from "../../src/redact.js";
import {
  page,
  record,
  type ScriptedServer,
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

function makeClient(overrides: Parameters<typeof testClient>[1] = {}) {
  const made = testClient(server.url, overrides);
  clients.push(made.client);
  return made.client;
}

function sendEncoded(response: ServerResponse, encoding: string, body: Buffer): void {
  response.writeHead(200, {
    "content-type": "application/json",
    "content-encoding": encoding,
    "content-length": body.length,
  });
  response.end(body);
}

const LIST = Buffer.from(JSON.stringify(page([record(1), record(2)])));

async function failure(read: () => Promise<unknown>): Promise<unknown> {
  return await read().then(
    () => undefined,
    (caught: unknown) => caught,
  );
}

describe("compressed answers", () => {
  it.each([
    ["gzip", gzipSync(LIST)],
    ["x-gzip", gzipSync(LIST)],
    ["deflate", deflateSync(LIST)],
    ["br", brotliCompressSync(LIST)],
    ["gzip, br", brotliCompressSync(gzipSync(LIST))],
    ["identity", LIST],
  ])("reads a body encoded with %s", async (encoding, body) => {
    server.setHandler((_request, response) => sendEncoded(response, encoding, body));
    const records = await listAllConfigs(makeClient(), "1", "plugin_configs");
    expect(records.map((entry) => entry.id)).toEqual([1, 2]);
  });

  it("reads an empty body as empty whatever its encoding says", async () => {
    server.setHandler((_request, response) => sendEncoded(response, "gzip", Buffer.alloc(0)));
    const answer = await makeClient().request({
      method: "GET",
      url: new URL(`${server.url}/api/projects/1/plugin_configs/5/frontend/`),
    });
    expect(answer.body.length).toBe(0);
  });

  it("stops inflating a bomb at the memory bound", async () => {
    // 64 MiB of zeros from about 64 KiB on the wire; the bound is 1 MiB.
    const member = gzipSync(Buffer.alloc(1024 * 1024));
    server.setHandler((_request, response) =>
      sendEncoded(response, "gzip", Buffer.concat(Array(64).fill(member))),
    );
    const error = await failure(() =>
      listAllConfigs(makeClient({ maxResponseBytes: 1024 * 1024 }), "1", "plugin_configs"),
    );
    expect(error).toMatchObject({ code: "response_too_large" });
    // Apply reads it as any other answer too large to read: a create may have happened.
    expect(error).toMatchObject({ code: "response_too_large" });
    expect((error as Error).message).toBe(
      "GET /api/projects/1/plugin_configs/: the gzip-encoded response inflates to more than the 1 MiB limit; reading stopped there (no page of this service is that large: is the base URL that of the Plugin Configuration Service?)",
    );
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    ["compress", Buffer.from("xx"), /the body is encoded with "compress", which pcsync cannot decode/],
    ["gzip, gzip, gzip", gzipSync(gzipSync(gzipSync(LIST))), /encoded 3 times \(gzip, gzip, gzip\)/],
    ["gzip", Buffer.from("not gzip at all"), /the gzip-encoded body is corrupt \(incorrect header check\)/],
    ["gzip", gzipSync(LIST).subarray(0, 20), /the gzip-encoded body is corrupt \(unexpected end of file\)/],
    ["br", Buffer.from([0xff, 0xff, 0xff, 0xff]), /the br-encoded body is corrupt/],
  ])("refuses a body encoded as %s that cannot be read", async (encoding, body, problem) => {
    server.setHandler((_request, response) => sendEncoded(response, encoding, body));
    const error = await failure(() => listAllConfigs(makeClient(), "1", "plugin_configs"));
    expect(error).toMatchObject({ code: "malformed_response" });
    expect((error as ServiceError<"malformed_response">).facts.problem).toMatch(problem);
    // Reading it again would read the same bytes.
    expect(server.requests).toHaveLength(1);
  });
});

describe("redirects", () => {
  it("never follows one; names where it led without its query, and never the key", async () => {
    const elsewhere = await startScriptedServer((_request, response) => sendJson(response, 200, page([])));
    try {
      server.setHandler((_request, response) => {
        response.writeHead(307, { location: `${elsewhere.url}/k/${TEST_KEY}/?key=${TEST_KEY}` });
        response.end();
      });
      const error = await failure(() => listAllConfigs(makeClient(), "1", "plugin_configs"));
      expect(error).toMatchObject({ code: "redirect_not_followed" });
      const redirect = error as ServiceError;
      expect(redirect.code).toBe("redirect_not_followed");
      expect(redirect.status).toBe(307);
      expect(redirect.outcomeUnknown).toBe(false);
      // The message keeps the Location as sent; the key leaves the process only redacted (at the
      // output edge, and in inspect/JSON of the error).
      expect(SecretRegistry.of([TEST_KEY]).redact(redirect.message).text).toMatch(
        /^307 GET \/api\/projects\/1\/plugin_configs\/: the service redirected to http:\/\/127\.0\.0\.1:\d+\/k\/\[REDACTED\]\/; pcsync does not follow redirects/,
      );
      expect(inspect(redirect)).not.toContain(TEST_KEY);
      expect(redirect.message).not.toContain("?key=");
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it("says so when a redirect has no Location", async () => {
    server.setHandler((_request, response) => {
      response.writeHead(301);
      response.end();
    });
    await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toThrow(
      /^301 GET \/api\/projects\/1\/plugin_configs\/: the service redirected without a Location;/,
    );
  });

  it("takes a redirected create as possibly done: the family is re-read before any second POST", async () => {
    const created = record(9, { name: "New", plugin: 3, order: 1 });
    let posted = false;
    server.setHandler((request, response) => {
      if (request.method === "POST") {
        posted = true;
        response.writeHead(303, { location: "/api/projects/1/plugin_configs/9/" });
        response.end();
        return;
      }
      sendJson(response, 200, page(posted ? [created] : []));
    });
    const made = await createRecord(
      makeClient(),
      "1",
      "plugin_configs",
      { plugin: 3, name: "New", order: 1 },
      { knownIds: new Set() },
    );
    expect(made.id).toBe(9);
    expect(server.requests.map((request) => request.method)).toEqual(["POST", "GET"]);
  });
});

describe("response headers", () => {
  it("refuses headers past the parser's limit once, with its own error", async () => {
    server.setHandler((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "x-padding": "a".repeat(100_000) });
      response.end(JSON.stringify(page([])));
    });
    const error = await failure(() => listAllConfigs(makeClient(), "1", "plugin_configs"));
    expect(error).toMatchObject({ code: "response_headers_too_large" });
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe("response_headers_too_large");
    expect((error as Error).message).toBe(
      "GET /api/projects/1/plugin_configs/: the response headers are larger than the 16 KiB limit, so the answer was not read; is the base URL that of the Plugin Configuration Service, and is any proxy in front of it working?",
    );
    expect(server.requests).toHaveLength(1);
  });
});
