// Pagination: following next links page by page, only ever to the next page of the same list,
// and handing over a whole list only when its pages add up.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { iterateLogs, listAllConfigs, listProjects, type ServiceError } from "../../src/api/index.js";
import { describeNextLinkMismatch } from "../../src/api/list-walk.js";
import {
  findListInconsistency,
  LIST_READ_ATTEMPTS,
  type ListedPage,
  listItems,
} from "../../src/api/paginate.js";
import { fc } from "../support/fast-check.js";
import {
  page,
  type RecordedRequest,
  record,
  type ScriptedServer,
  sendJson,
  sendListPage,
  startScriptedServer,
  TEST_KEY,
  testClient,
} from "../support/scripted-server.js";

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
    expect(error).toMatchObject({ code: "foreign_next_link" });
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
      await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toMatchObject({
        code: "foreign_next_link",
      });
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
    await expect(listAllConfigs(client, "1", "plugin_configs")).rejects.toMatchObject({
      code: "foreign_next_link",
    });
    expect(server.requests.map((request) => request.url)).toEqual([
      "/svc/api/projects/1/plugin_configs/?limit=1000",
    ]);
  });

  it("stops a next link that repeats", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 200, page([record(1)], `${server.url}/api/projects/1/plugin_configs/?offset=1`, 50)),
    );
    const client = makeClient();
    await expect(listAllConfigs(client, "1", "plugin_configs")).rejects.toThrow(
      /pagination does not end \(in project 1's plugin_configs, the next link of the page at offset 1 goes to offset 1, which is not further on\)/,
    );
    // Pages after the first are asked for by offset, a window of them at once: the link is found
    // repeating once followed, at most the window's worth of requests later.
    expect(server.requests.length).toBeLessThanOrEqual(2 + client.concurrency);
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
    expect(error).toMatchObject({ code: "list_changed_during_read" });
    expect((error as Error).message).toContain("(last: records were listed beyond the count of 2)");
    // Each read stops at the page whose link goes past the count.
    expect(server.requests.length).toBeLessThanOrEqual(2 * LIST_READ_ATTEMPTS);
  });

  it("stops an empty page that links further", async () => {
    server.setHandler((_request, response) =>
      sendJson(response, 200, page([], `${server.url}/api/projects/1/plugin_configs/?offset=1`, 10)),
    );
    await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toMatchObject({
      code: "pagination_loop",
    });
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

describe("lists that never end, end", () => {
  /** A page at the request's offset with `next` one page on, whatever the count says. */
  function endlessPage(
    request: RecordedRequest,
    options: { count: (offset: number) => number; ids?: (offset: number, size: number) => number[] },
  ) {
    const url = new URL(request.url, server.url);
    const limit = Number(url.searchParams.get("limit"));
    const offset = Number(url.searchParams.get("offset") ?? 0);
    const ids =
      options.ids?.(offset, limit) ?? Array.from({ length: limit }, (_, index) => offset + index + 1);
    url.searchParams.set("offset", String(offset + limit));
    return page(
      ids.map((id) => record(id)),
      url.href,
      options.count(offset),
    );
  }

  it("refuses an implausible count at the first page, naming the list and the bound", async () => {
    server.setHandler((request, response) =>
      sendJson(response, 200, endlessPage(request, { count: () => 1_000_000_000 })),
    );
    const error = await listAllConfigs(makeClient({ pageSize: 2 }), "1", "plugin_configs").catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "list_too_long" });
    expect(error).toMatchObject({ code: "list_too_long", exitCode: 1 });
    expect((error as Error).message).toBe(
      "GET /api/projects/1/plugin_configs/: the service gives the count of project 1's plugin_configs as 1000000000, more than the 100000 records pcsync reads of one list (--max-list-records); refusing to read further. If the list really is that long or the service that slow, raise --max-list-records; otherwise the service, or a proxy in front of it, is answering wrongly",
    );
    expect(server.requests).toHaveLength(1);
    // The bound is the client's: a lower one refuses a smaller count, the project list too.
    const bounded = makeClient({ pageSize: 2, listBounds: { maxRecords: 10 } });
    server.setHandler((request, response) =>
      sendJson(response, 200, endlessPage(request, { count: () => 11 })),
    );
    await expect(listProjects(bounded)).rejects.toThrow(/count of the project list as 11, more than the 10/);
  });

  it("refuses a cycle of two pages when the link goes back, after a bounded number of requests", async () => {
    server.setHandler((request, response) => {
      const offset = Number(new URL(request.url, server.url).searchParams.get("offset") ?? 0);
      const back = `${server.url}/api/projects/1/plugin_configs/?limit=2&offset=${offset === 0 ? 2 : 0}`;
      sendJson(response, 200, page([record(offset + 1), record(offset + 2)], back, 40));
    });
    const client = makeClient({ pageSize: 2 });
    await expect(listAllConfigs(client, "1", "plugin_configs")).rejects.toThrow(
      /pagination does not end \(in project 1's plugin_configs, the next link of the page at offset 2 goes to offset 0, which is not further on\)/,
    );
    // The first page, and the pages asked ahead of the walk at most.
    expect(server.requests.length).toBeLessThanOrEqual(1 + 2 * client.concurrency);
  });

  it.each([
    {
      what: "one page served again under a moving offset",
      shape: { count: () => 90_000, ids: () => [1, 2] },
      problem: "(last: id 1 is listed on pages 1 and 2)",
    },
    {
      what: "a count that grows with every page",
      shape: { count: (offset: number) => 10 + offset },
      problem: "(last: the count went from 10 to 12 between pages 1 and 2)",
    },
  ])("stops $what at its second page, on each read", async ({ shape, problem }) => {
    server.setHandler((request, response) => sendJson(response, 200, endlessPage(request, shape)));
    const client = makeClient({ pageSize: 2, concurrency: 4 });
    const error = await listAllConfigs(client, "1", "plugin_configs").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "list_changed_during_read" });
    expect((error as Error).message).toContain(problem);
    // Each read asks its first page and at most the pages asked ahead when page 2 came back.
    expect(server.requests.length).toBeLessThanOrEqual(LIST_READ_ATTEMPTS * (1 + 2 * client.concurrency));
  });

  it("ends a slow list that keeps going within its count at the time bound", async () => {
    server.setHandler((request, response) => {
      setTimeout(() => sendJson(response, 200, endlessPage(request, { count: () => 50_000 })), 20);
    });
    const client = makeClient({ pageSize: 1, concurrency: 2, listBounds: { maxReadMs: 250 } });
    const started = Date.now();
    const error = await listAllConfigs(client, "1", "plugin_configs").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "list_too_long" });
    expect((error as Error).message).toMatch(
      /^GET \/api\/projects\/1\/plugin_configs\/: reading project 1's plugin_configs has taken \d+(\.\d)? s, more than the 0\.3 s one list may take \(--list-timeout\), after \d+ pages and \d+ records; refusing to read further\. If .* raise --list-timeout/,
    );
    // Stopped at the bound plus the pages in flight then, not at 50,000 pages.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.requests.length).toBeLessThan(100);
  });

  it("refuses log pages that only repeat entries already read, however large the count", async () => {
    const entry = {
      id: "entry-1",
      team_id: 1,
      plugin_id: 12,
      plugin_config_id: 3,
      timestamp: "2024-06-01T00:00:00Z",
      source: "PLUGIN",
      type: "INFO",
      message: "again",
      instance_id: null,
    };
    server.setHandler((request, response) => {
      const url = new URL(request.url, server.url);
      url.searchParams.set("offset", String(Number(url.searchParams.get("offset") ?? 0) + 1));
      sendJson(response, 200, page([entry], url.href, 1_000_000_000));
    });
    const read = async () => {
      for await (const _ of iterateLogs(makeClient({ pageSize: 1 }), "1", "plugin_configs", 3)) {
        // drain
      }
    };
    await expect(read()).rejects.toThrow(
      /pagination does not end \(3 pages in a row hold only log entries already read\)/,
    );
    expect(server.requests).toHaveLength(4);
  });
});

describe("describeNextLinkMismatch: only limit and offset may change", () => {
  const FIRST = new URL("https://pcs.example/svc/api/projects/1/plugin_configs/?limit=1000");
  const LOGS = new URL(
    "https://pcs.example/api/projects/1/plugin_configs/7/logs/?limit=100&type_filter=INFO&type_filter=WARN&search=a+b&after=2024-06-01T00%3A00%3A00.000Z",
  );
  const at = (link: string, first = FIRST) => describeNextLinkMismatch(first, new URL(link, first));

  it.each([
    ["the next offset", "/svc/api/projects/1/plugin_configs/?limit=1000&offset=1000"],
    ["a capped page size", "/svc/api/projects/1/plugin_configs/?limit=100&offset=100"],
    ["no trailing slash", "/svc/api/projects/1/plugin_configs?limit=1000&offset=1000"],
    ["parameters in another order", "/svc/api/projects/1/plugin_configs/?offset=1000&limit=1000"],
    ["percent-encoding of the same path", "/svc/api/projects/%31/plugin%5Fconfigs/?offset=3"],
    ["a dot segment that resolves to the same path", "/svc/api/projects/1/x/../plugin_configs/?offset=3"],
  ])("accepts %s", (_name, link) => {
    expect(at(link)).toBeUndefined();
  });

  it.each([
    [
      "another project",
      "/svc/api/projects/2/plugin_configs/?limit=1000&offset=1000",
      /path is \/svc\/api\/projects\/2\//,
    ],
    ["the other family", "/svc/api/projects/1/pipeline_frontend_apps_configs/?offset=3", /path is/],
    ["a record below the collection", "/svc/api/projects/1/plugin_configs/5/?offset=3", /path is/],
    ["a rearrange path", "/svc/api/projects/1/plugin_configs/rearrange/", /path is/],
    [
      "a dot segment that resolves elsewhere",
      "/svc/api/projects/1/plugin_configs/../../2/plugin_configs/?offset=3",
      /projects\/2\//,
    ],
    [
      "percent-encoded dot segments",
      "/svc/api/projects/1/plugin_configs/%2e%2e/%2E%2e/2/plugin_configs/",
      /projects\/2\//,
    ],
    ["an encoded slash", "/svc/api/projects/1%2F..%2F2/plugin_configs/?offset=3", /path is/],
    ["a doubled trailing slash", "/svc/api/projects/1/plugin_configs//?offset=3", /path is/],
    ["the collection's parent", "/svc/api/projects/1/?offset=3", /path is/],
    [
      "an extra query parameter",
      "/svc/api/projects/1/plugin_configs/?limit=1000&offset=3&project=2",
      /"project"/,
    ],
    ["a repeated offset", "/svc/api/projects/1/plugin_configs/?offset=3&offset=0", /offset 2 times/],
    ["an offset that is not an integer", "/svc/api/projects/1/plugin_configs/?offset=-3", /offset "-3"/],
    [
      "a limit that is not an integer",
      "/svc/api/projects/1/plugin_configs/?limit=1e3&offset=3",
      /limit "1e3"/,
    ],
  ])("refuses %s", (_name, link, reason) => {
    expect(at(link)).toMatch(reason);
  });

  it("holds log pages to the first request's filters, in any order", () => {
    const same =
      "/api/projects/1/plugin_configs/7/logs/?after=2024-06-01T00:00:00.000Z&type_filter=WARN&search=a%20b&type_filter=INFO&limit=100&offset=100";
    expect(at(same, LOGS)).toBeUndefined();
    const cases: Array<[string, RegExp]> = [
      [
        "/api/projects/1/plugin_configs/7/logs/?limit=100&offset=100&type_filter=INFO&search=a+b&after=2024-06-01T00:00:00.000Z",
        /"type_filter"/,
      ],
      [
        "/api/projects/1/plugin_configs/7/logs/?type_filter=INFO&type_filter=WARN&search=a+c&after=2024-06-01T00:00:00.000Z&offset=5",
        /"search"/,
      ],
      [
        "/api/projects/1/plugin_configs/7/logs/?type_filter=INFO&type_filter=WARN&search=a+b&offset=5",
        /"after"/,
      ],
      [
        "/api/projects/1/plugin_configs/8/logs/?type_filter=INFO&type_filter=WARN&search=a+b&after=2024-06-01T00:00:00.000Z",
        /path is/,
      ],
    ];
    for (const [link, reason] of cases) expect(at(link, LOGS), link).toMatch(reason);
  });

  const segment = fc.stringMatching(/^[A-Za-z0-9_@-]{1,12}$/);
  const pathArb = fc.array(segment, { minLength: 1, maxLength: 5 });
  const filtersArb = fc.array(fc.tuple(fc.constantFrom("type_filter", "search", "after"), segment), {
    maxLength: 4,
  });

  it("accepts any page of the same list (property)", () => {
    fc.assert(
      fc.property(
        pathArb,
        filtersArb,
        fc.nat({ max: 10_000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.boolean(),
        (path, filters, offset, limit, slash) => {
          const first = new URL(`https://pcs.example/${path.join("/")}/`);
          first.searchParams.set("limit", "1000");
          for (const [name, value] of filters) first.searchParams.append(name, value);
          const next = new URL(`https://pcs.example/${path.join("/")}${slash ? "/" : ""}`);
          // The same filters, reversed, with a new page position.
          for (const [name, value] of [...filters].reverse()) next.searchParams.append(name, value);
          next.searchParams.set("offset", String(offset));
          next.searchParams.set("limit", String(limit));
          expect(describeNextLinkMismatch(first, next)).toBeUndefined();
        },
      ),
    );
  });

  it("refuses any change of one path segment or one filter (property)", () => {
    fc.assert(
      fc.property(
        pathArb,
        filtersArb,
        fc.nat(),
        segment,
        fc.boolean(),
        (path, filters, pick, replacement, changeFilter) => {
          const build = (segments: string[], query: Array<[string, string]>) => {
            const url = new URL(`https://pcs.example/${segments.join("/")}/`);
            for (const [name, value] of query) url.searchParams.append(name, value);
            return url;
          };
          const first = build(path, filters);
          if (changeFilter) {
            const changed: Array<[string, string]> = [...filters];
            const index = pick % (changed.length + 1);
            const existing = changed[index];
            if (existing && existing[1] === replacement) return;
            if (existing) changed[index] = [existing[0], replacement];
            else changed.push(["search", replacement]);
            expect(describeNextLinkMismatch(first, build(path, changed))).toMatch(/query differs/);
          } else {
            const index = pick % path.length;
            if (path[index] === replacement) return;
            const changed = path.map((value, at) => (at === index ? replacement : value));
            expect(describeNextLinkMismatch(first, build(changed, filters))).toMatch(/path is/);
          }
        },
      ),
    );
  });
});

describe("findListInconsistency", () => {
  const pages = (count: number, ...ids: Array<Array<number | string>>): ListedPage[] =>
    ids.map((results) => ({ count, results: results.map((id) => ({ id })) }));

  it("accepts pages that add up, and an empty list", () => {
    expect(findListInconsistency(pages(5, [1, 2, 3], [4, 5]))).toBeUndefined();
    expect(findListInconsistency(pages(0, []))).toBeUndefined();
    expect(findListInconsistency([])).toBeUndefined();
  });

  it("names what does not add up", () => {
    expect(findListInconsistency([...pages(7, [1, 2, 3]), ...pages(6, [5, 6, 7])])).toBe(
      "the count went from 7 to 6 between pages 1 and 2",
    );
    expect(findListInconsistency(pages(6, [1, 2, 5049], [5049, 6, 7]))).toBe(
      "id 5049 is listed on pages 1 and 2",
    );
    expect(findListInconsistency(pages(2, [3, 3]))).toBe("id 3 is listed twice on page 1");
    expect(findListInconsistency(pages(7, [1, 2, 3], [5, 6, 7]))).toBe(
      "6 records were listed for a count of 7",
    );
    expect(findListInconsistency(pages(0, [1]))).toBe("records were listed beyond the count of 0");
    expect(
      findListInconsistency([{ count: 4, results: [{ id: 1 }, { id: 2 }], next: "/list/?limit=2&offset=4" }]),
    ).toBe("records were listed beyond the count of 4");
    // Projects may list ids as numbers or strings: one project either way.
    expect(findListInconsistency(pages(2, [7], ["7"]))).toBe("id 7 is listed on pages 1 and 2");
  });

  /** Reads `list` in pages of `size`, applying `change` to it after the page read first. */
  function pagedRead(
    list: number[],
    size: number,
    change?: { afterPage: number; apply: (items: number[]) => void },
  ) {
    const items = [...list];
    const read: ListedPage[] = [];
    for (let offset = 0, index = 0; ; offset += size, index += 1) {
      read.push({ count: items.length, results: items.slice(offset, offset + size).map((id) => ({ id })) });
      if (change?.afterPage === index) change.apply(items);
      if (offset + size >= items.length) return read;
    }
  }

  const listArb = fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { minLength: 2, maxLength: 40 });

  it("accepts every paged read of a list that held still (property)", () => {
    fc.assert(
      fc.property(listArb, fc.integer({ min: 1, max: 45 }), (list, size) => {
        expect(findListInconsistency(pagedRead(list, size))).toBeUndefined();
      }),
    );
  });

  it("detects any one record deleted or inserted between two pages (property)", () => {
    fc.assert(
      fc.property(
        listArb,
        fc.integer({ min: 1, max: 39 }),
        fc.nat(),
        fc.boolean(),
        (list, size, at, insert) => {
          fc.pre(size < list.length);
          const change = {
            afterPage: 0,
            apply: (items: number[]) => {
              if (insert) items.splice(at % (items.length + 1), 0, 20_000);
              else items.splice(at % items.length, 1);
            },
          };
          expect(findListInconsistency(pagedRead(list, size, change))).toBeDefined();
        },
      ),
    );
  });
});

describe("reading a whole list", () => {
  const LIST_PATH = "/api/projects/1/plugin_configs/";
  const isFirstPage = (request: RecordedRequest) => !request.url.includes("offset=");

  it("reads a list again from its first page when a record was deleted between pages", async () => {
    const records = Array.from({ length: 7 }, (_, index) => record(index + 1));
    let firstPages = 0;
    server.setHandler((request, response) => {
      if (isFirstPage(request)) firstPages += 1;
      sendListPage(response, server.url, request.url, records);
      // Record 2 goes once page 1 of the first read is out: the old offsets skip record 4.
      if (firstPages === 1 && isFirstPage(request)) records.splice(1, 1);
    });
    const { client, sleeps, trace } = testClient(server.url, { pageSize: 3 });
    clients.push(client);
    const listed = await listAllConfigs(client, "1", "plugin_configs");
    expect(listed.map((entry) => entry.id)).toEqual([1, 3, 4, 5, 6, 7]);
    const urls = server.requests.map((request) => request.url);
    expect(urls[0]).toBe(`${LIST_PATH}?limit=3`);
    // Pages 2 and 3 are asked for at once; page 2 says 6 now: the first read ends there, one
    // record short, and is read again.
    expect(urls.slice(1, 3).sort()).toEqual([
      `${LIST_PATH}?limit=3&offset=3`,
      `${LIST_PATH}?limit=3&offset=6`,
    ]);
    expect(urls.slice(3)).toEqual([`${LIST_PATH}?limit=3`, `${LIST_PATH}?limit=3&offset=3`]);
    expect(sleeps).toHaveLength(1);
    expect(trace.join("\n")).toMatch(
      /the list changed while it was read \(the count went from 7 to 6 between pages 1 and 2\); reading it again \(2\/3\)/,
    );
  });

  it("reads a list again when a record was inserted between pages (one record shown twice)", async () => {
    const records = Array.from({ length: 6 }, (_, index) => record(index + 5044));
    let firstPages = 0;
    server.setHandler((request, response) => {
      if (isFirstPage(request)) firstPages += 1;
      sendListPage(response, server.url, request.url, records);
      if (firstPages === 1 && isFirstPage(request)) records.unshift(record(5000));
    });
    const client = makeClient({ pageSize: 3 });
    const listed = await listAllConfigs(client, "1", "plugin_configs");
    expect(listed.map((entry) => entry.id)).toEqual([5000, 5044, 5045, 5046, 5047, 5048, 5049]);
    expect(server.requests.filter(isFirstPage)).toHaveLength(2);
  });

  it("refuses a list that changes on every read, after a bounded number of reads", async () => {
    const records = Array.from({ length: 5 }, (_, index) => record(index + 1));
    let nextId = 100;
    server.setHandler((request, response) => {
      sendListPage(response, server.url, request.url, records);
      if (isFirstPage(request)) records.unshift(record(nextId++));
    });
    const { client, sleeps } = testClient(server.url, { pageSize: 2 });
    clients.push(client);
    const firstUrl = client.url("/api/projects/1/plugin_configs/", { limit: client.pageSize });
    const error = await listItems(client, firstUrl, "recordPage").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "list_changed_during_read" });
    expect((error as ServiceError).code).toBe("list_changed_during_read");
    expect((error as Error).message).toMatch(
      /^GET \/api\/projects\/1\/plugin_configs\/: the service's list changed while it was being read, on 3 reads in a row \(last: the count went from \d+ to \d+ between pages 1 and 2\), so pcsync has no consistent copy of it and uses none; run pcsync again once nothing else is changing these records/,
    );
    expect(server.requests.filter(isFirstPage)).toHaveLength(LIST_READ_ATTEMPTS);
    expect(sleeps).toHaveLength(LIST_READ_ATTEMPTS - 1);
  });

  it("refuses a single page whose count disagrees with its records, on every read", async () => {
    server.setHandler((_request, response) => sendJson(response, 200, page([record(1), record(2)], null, 3)));
    const error = await listAllConfigs(makeClient(), "1", "plugin_configs").catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "list_changed_during_read" });
    expect((error as Error).message).toContain("(last: 2 records were listed for a count of 3)");
    expect(server.requests).toHaveLength(LIST_READ_ATTEMPTS);
  });

  it("refuses a next link to another project's list, and never asks for it", async () => {
    server.setHandler((request, response) => {
      if (request.url.startsWith("/api/projects/2/")) return sendJson(response, 200, page([record(9)]));
      sendJson(
        response,
        200,
        page([record(1)], `${server.url}/api/projects/2/plugin_configs/?limit=1&offset=1`, 2),
      );
    });
    const error = await listAllConfigs(makeClient({ pageSize: 1 }), "1", "plugin_configs").catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "next_link_off_collection" });
    expect((error as ServiceError).code).toBe("next_link_off_collection");
    expect((error as Error).message).toBe(
      "GET /api/projects/1/plugin_configs/: the next-page link /api/projects/2/plugin_configs/?limit=1&offset=1 is not the next page of this list (its path is /api/projects/2/plugin_configs/, not /api/projects/1/plugin_configs/); refusing to follow it, since its records would be taken for this list's. The service, or a proxy in front of it, rewrites its links: report it to whoever runs it",
    );
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a next link to another port of the same host as another origin", async () => {
    const port = new URL(elsewhere.url).port;
    server.setHandler((_request, response) =>
      sendJson(
        response,
        200,
        page([record(1)], `http://127.0.0.1:${port}/api/projects/1/plugin_configs/?offset=1`, 2),
      ),
    );
    await expect(listAllConfigs(makeClient(), "1", "plugin_configs")).rejects.toMatchObject({
      code: "foreign_next_link",
    });
    expect(elsewhere.requests).toEqual([]);
  });

  it("reads the project list again when it changed between pages", async () => {
    const projects = [
      { id: 1, name: "a" },
      { id: 2, name: "b" },
      { id: 3, name: "c" },
    ];
    let reads = 0;
    server.setHandler((request, response) => {
      if (isFirstPage(request)) reads += 1;
      sendListPage(response, server.url, request.url, projects);
      if (reads === 1 && isFirstPage(request)) projects.shift();
    });
    const client = makeClient({ pageSize: 2 });
    expect((await listProjects(client)).map((project) => project.id)).toEqual([2, 3]);
  });
});

describe("iterating logs", () => {
  const entry = (index: number) => ({
    id: `entry-${index}`,
    team_id: 1,
    plugin_id: 12,
    plugin_config_id: 3,
    timestamp: new Date(Date.UTC(2024, 5, 1, 0, 0, index)).toISOString(),
    source: "PLUGIN",
    type: "INFO",
    message: `line ${index}`,
    instance_id: null,
  });

  it("yields each entry once while new ones arrive at the head, without refusing", async () => {
    // Newest first: entry 9 at the head.
    const entries = Array.from({ length: 10 }, (_, index) => entry(9 - index));
    let served = 0;
    server.setHandler((request, response) => {
      sendListPage(response, server.url, request.url, entries);
      served += 1;
      // Two new entries after every page: each later page starts with entries already seen.
      entries.unshift(entry(100 + 2 * served), entry(99 + 2 * served));
    });
    const client = makeClient({ pageSize: 4 });
    const messages: string[] = [];
    for await (const logged of iterateLogs(client, "1", "plugin_configs", 3)) messages.push(logged.message);
    expect(messages.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, index) => `line ${9 - index}`));
    expect(new Set(messages).size).toBe(messages.length);
  });

  it("refuses a next link that drops the log filters", async () => {
    server.setHandler((request, response) =>
      sendJson(
        response,
        200,
        page([entry(1)], `${server.url}${new URL(request.url, server.url).pathname}?limit=1&offset=1`, 3),
      ),
    );
    const client = makeClient({ pageSize: 1 });
    const read = async () => {
      for await (const _ of iterateLogs(client, "1", "plugin_configs", 3, { typeFilter: ["ERROR"] })) {
        // drain
      }
    };
    await expect(read()).rejects.toThrow(/its query differs from the first request's in "type_filter"/);
    expect(server.requests).toHaveLength(1);
  });
});
