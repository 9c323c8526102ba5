// Pagination: following next links page by page, and only ever under the base URL.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ForeignNextLinkError,
  iterateLogs,
  listAllConfigs,
  listProjects,
  PaginationLoopError,
} from "../../src/api/index.js";
import {
  page,
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
  TEST_KEY,
  testClient,
} from "./scripted-server.js";

let server: ScriptedServer;
let elsewhere: ScriptedServer;
const clients: Array<{ close(): Promise<void> }> = [];

beforeEach(async () => {
  server = await startScriptedServer();
  elsewhere = await startScriptedServer((_request, response) => sendJson(response, 200, page([record(99)])));
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all([server.close(), elsewhere.close()]);
});

function makeClient(overrides: Parameters<typeof testClient>[1] = {}, baseUrl = server.url) {
  const made = testClient(baseUrl, overrides);
  clients.push(made.client);
  return made.client;
}

describe("paginate", () => {
  it("follows absolute and relative next links through every page", async () => {
    const all = Array.from({ length: 7 }, (_, index) => record(index + 1));
    server.setHandler((request, response) => {
      const url = new URL(request.url, server.url);
      const limit = Number(url.searchParams.get("limit"));
      const offset = Number(url.searchParams.get("offset") ?? 0);
      const nextOffset = offset + limit;
      const next =
        nextOffset >= all.length
          ? null
          : // Alternate absolute and relative links: both must work.
            offset === 0
            ? `${server.url}${url.pathname}?limit=${limit}&offset=${nextOffset}`
            : `${url.pathname}?limit=${limit}&offset=${nextOffset}`;
      sendJson(response, 200, page(all.slice(offset, nextOffset), next, all.length));
    });
    const client = makeClient({ pageSize: 3 });
    const records = await listAllConfigs(client, "1", "plugin_configs");
    expect(records.map((entry) => entry.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/api/projects/1/plugin_configs/?limit=3",
      "/api/projects/1/plugin_configs/?limit=3&offset=3",
      "/api/projects/1/plugin_configs/?limit=3&offset=6",
    ]);
  });

  it("reads an empty family in one request", async () => {
    server.setHandler((_request, response) => sendJson(response, 200, { count: 0, results: [] }));
    const client = makeClient();
    expect(await listAllConfigs(client, "1", "plugin_configs")).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a next link to another origin and never sends the key there", async () => {
    server.setHandler((_request, response) =>
      sendJson(
        response,
        200,
        page([record(1)], `${elsewhere.url}/api/projects/1/plugin_configs/?offset=1`, 2),
      ),
    );
    const client = makeClient({ pageSize: 1 });
    const error = await listAllConfigs(client, "1", "plugin_configs").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ForeignNextLinkError);
    expect((error as Error).message).toContain(`points to ${elsewhere.url}/api/projects/1/plugin_configs/`);
    expect(elsewhere.requests).toHaveLength(0);
    expect(JSON.stringify(elsewhere.requests)).not.toContain(TEST_KEY);
  });

  it("refuses a next link on the same host but another port or scheme", async () => {
    const port = new URL(elsewhere.url).port;
    for (const link of [
      `http://127.0.0.1:${port}/api/x/`,
      `${server.url.replace("http:", "https:")}/api/x/`,
    ]) {
      server.setHandler((_request, response) => sendJson(response, 200, page([record(1)], link, 5)));
      await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toBeInstanceOf(
        ForeignNextLinkError,
      );
    }
    expect(elsewhere.requests).toHaveLength(0);
  });

  it("refuses a next link outside the base URL's path prefix", async () => {
    server.setHandler((_request, response) =>
      sendJson(
        response,
        200,
        page([record(1)], `${server.url}/other/api/projects/1/plugin_configs/?offset=1`, 2),
      ),
    );
    const client = makeClient({}, `${server.url}/svc`);
    await expect(listAllConfigs(client, "1", "plugin_configs")).rejects.toBeInstanceOf(ForeignNextLinkError);
    expect(server.requests.map((request) => request.url)).toEqual([
      "/svc/api/projects/1/plugin_configs/?limit=1000",
    ]);
  });

  it("stops a next link that repeats", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 200, page([record(1)], `${server.url}/api/projects/1/plugin_configs/?offset=1`, 50)),
    );
    await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toThrow(/next link repeats/);
    expect(server.requests).toHaveLength(2);
  });

  it("stops at more pages than count allows", async () => {
    let offset = 0;
    server.setHandler((_request, response) => {
      offset += 1;
      sendJson(
        response,
        200,
        page([record(offset)], `${server.url}/api/projects/1/plugin_configs/?offset=${offset}`, 2),
      );
    });
    const error = await listAllConfigs(makeClient(), "1", "plugin_configs").catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PaginationLoopError);
    expect(server.requests).toHaveLength(3);
  });

  it("stops an empty page that links further", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 200, page([], `${server.url}/api/projects/1/plugin_configs/?offset=1`, 10)),
    );
    await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toBeInstanceOf(
      PaginationLoopError,
    );
  });

  it("lists projects and stops log iteration at the number asked", async () => {
    server.setHandler((request, response) => {
      if (request.url.startsWith("/api/projects/?")) {
        return sendJson(
          response,
          200,
          page([
            { id: 1, name: "Default" },
            { id: 2, name: null, extra: true },
          ]),
        );
      }
      const entries = Array.from({ length: 5 }, (_, index) => ({
        id: `entry-${index}`,
        team_id: 1,
        plugin_id: 12,
        plugin_config_id: 3,
        timestamp: "2024-06-01T00:00:00Z",
        source: "PLUGIN",
        type: "INFO",
        message: `line ${index}`,
        instance_id: "00000000-0000-0000-0000-000000000000",
      }));
      sendJson(response, 200, page(entries, null, 5));
    });
    const client = makeClient();
    expect((await listProjects(client)).map((project) => project.id)).toEqual([1, 2]);
    const messages: string[] = [];
    for await (const entry of iterateLogs(client, "1", "plugin_configs", 3, { typeFilter: ["INFO"] }, 2)) {
      messages.push(entry.message);
    }
    expect(messages).toEqual(["line 0", "line 1"]);
    expect(server.requests[1]?.url).toBe(
      "/api/projects/1/plugin_configs/3/logs/?limit=1000&type_filter=INFO",
    );
  });
});
