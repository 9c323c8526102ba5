// Reading a big list's pages by offset, several at once: whatever the server does (answers out of
// order, caps the page size, serves short pages, lies about count, fails or throttles a page,
// changes the list while it is read), the read equals the one a walk along `next` makes, or is
// refused as that walk is, and never has more requests in flight than the client allows.

import { afterEach, describe, expect, it } from "vitest";
import { type ApiClient, listAllConfigs, ServiceError } from "../../src/api/index.js";
import { findListInconsistency, LIST_READ_ATTEMPTS, paginate } from "../../src/api/paginate.js";
import { readCurrentState } from "../../src/read/read-current-state.js";
import { fc } from "../support/fast-check.js";
import {
  type PagedListScript,
  type PagedListServer,
  startPagedListServer,
} from "../support/paged-list-server.js";
import { record, testClient } from "../support/scripted-server.js";

const servers: PagedListServer[] = [];
const clients: ApiClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const records = (length: number, from = 1) => Array.from({ length }, (_, index) => record(from + index));
const idsOf = (items: readonly unknown[]) => items.map((item) => (item as { id: number }).id);

async function serve(items: unknown[], script: PagedListScript = {}) {
  const server = await startPagedListServer(items, script);
  servers.push(server);
  return server;
}

function clientFor(server: PagedListServer, options: { pageSize?: number; concurrency?: number } = {}) {
  const made = testClient(server.url, {
    pageSize: options.pageSize ?? 1000,
    concurrency: options.concurrency ?? 4,
  });
  clients.push(made.client);
  return made;
}

type Outcome = { ids: number[] } | { code: string; message: string };

/** The ids read, or the error's code and message (with the server's own URL left out). */
async function outcomeOf(server: PagedListServer, read: () => Promise<readonly unknown[]>): Promise<Outcome> {
  try {
    return { ids: idsOf(await read()) };
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return { code: code ?? "?", message: message.replaceAll(server.url, "<server>") };
  }
}

/** The read as a walk along `next` links makes it, page after page (the reference). */
async function readSequentially(client: ApiClient): Promise<unknown[]> {
  const firstUrl = client.url("/api/projects/1/plugin_configs/", { limit: client.pageSize });
  for (let read = 1; ; read += 1) {
    const pages = [];
    for await (const listed of paginate(client, firstUrl, "recordPage")) pages.push(listed);
    const problem = findListInconsistency(pages);
    if (problem === undefined) return pages.flatMap((listed) => listed.results);
    if (read >= LIST_READ_ATTEMPTS) {
      throw new ServiceError("list_changed_during_read", client.describeRequest("GET", firstUrl), {
        reads: read,
        problem: problem,
      });
    }
  }
}

/** The concurrent read and the sequential one of the same scripted list, each on a server of its own. */
async function bothReads(
  length: number,
  script: () => PagedListScript,
  options: { pageSize?: number; concurrency?: number } = {},
) {
  const concurrentServer = await serve(records(length), script());
  const concurrent = await outcomeOf(concurrentServer, () =>
    listAllConfigs(clientFor(concurrentServer, options).client, "1", "plugin_configs"),
  );
  // Pages read one at a time never overlap: nothing to wait for.
  const { holdUntilInFlight: _overlapOnlyWhenConcurrent, ...oneAtATime } = script();
  const sequentialServer = await serve(records(length), oneAtATime);
  const sequential = await outcomeOf(sequentialServer, () =>
    readSequentially(clientFor(sequentialServer, options).client),
  );
  return { concurrent, sequential, concurrentServer, sequentialServer };
}

describe("reading a list's pages by offset, several at once", () => {
  it("asks for the pages after the first together, up to the client's concurrency, answered in any order", async () => {
    // Later pages answer first: the read must still put them in offset order.
    const server = await serve(records(60), {
      cap: 5,
      delayMs: (request) => 12 - request.offset / 5,
      holdUntilInFlight: 4,
    });
    const { client } = clientFor(server, { concurrency: 4 });
    expect(idsOf(await listAllConfigs(client, "1", "plugin_configs"))).toEqual(idsOf(records(60)));
    expect(server.seen).toHaveLength(12);
    expect(server.maxInFlight).toBe(4);
  });

  it("derives the page size from the first page when the server caps it below the limit asked", async () => {
    const server = await serve(records(50), { cap: 7, holdUntilInFlight: 2 });
    const { client } = clientFor(server, { pageSize: 1000 });
    expect(idsOf(await listAllConfigs(client, "1", "plugin_configs"))).toEqual(idsOf(records(50)));
    expect(server.seen.map((request) => request.offset).sort((a, b) => a - b)).toEqual([
      0, 7, 14, 21, 28, 35, 42, 49,
    ]);
    expect(server.seen.slice(1).every((request) => request.limit === 7)).toBe(true);
    expect(server.maxInFlight).toBeGreaterThan(1);
  });

  it("never has more requests in flight than the client allows, across families read at once", async () => {
    const server = await serve(records(80), { cap: 4, holdUntilInFlight: 3 });
    const { client } = clientFor(server, { concurrency: 3 });
    const state = await readCurrentState(
      client,
      [
        { project: "1", family: "plugin_configs" },
        { project: "2", family: "plugin_configs" },
      ],
      { concurrency: 2 },
    );
    expect(state.families.map((family) => family.records.length)).toEqual([80, 80]);
    expect(server.seen).toHaveLength(40);
    // Two lists at a time, each asking several pages: the client's bound is what holds them.
    expect(server.maxInFlight).toBe(3);
  });

  it("retries a page that failed or was throttled, and reads the same list", async () => {
    const failed = new Set<number>();
    const script = (): PagedListScript => {
      failed.clear();
      return {
        cap: 3,
        holdUntilInFlight: 2,
        fail: (request) => {
          if (![6, 15].includes(request.offset) || failed.has(request.offset)) return undefined;
          failed.add(request.offset);
          return request.offset === 6 ? 503 : 429;
        },
      };
    };
    const { concurrent, sequential, concurrentServer } = await bothReads(20, script);
    expect(concurrent).toEqual({ ids: idsOf(records(20)) });
    expect(concurrent).toEqual(sequential);
    expect(concurrentServer.seen).toHaveLength(7 + 2);
    expect(concurrentServer.maxInFlight).toBeGreaterThan(1);
  });

  it("reads on along `next` from a page shorter than asked, as a walk would", async () => {
    // The page at 6 serves 2 of 3 and links on to offset 8: the pages asked at 9, 12... are not taken.
    const script = (): PagedListScript => ({
      cap: 3,
      holdUntilInFlight: 2,
      shortPage: (request) => (request.offset === 6 ? 2 : undefined),
    });
    const { concurrent, sequential, concurrentServer } = await bothReads(20, script);
    expect(concurrent).toEqual({ ids: idsOf(records(20)) });
    expect(concurrent).toEqual(sequential);
    expect(concurrentServer.maxInFlight).toBeGreaterThan(1);
  });

  it("follows `next` from the first page when its link is not to the offset after it", async () => {
    const script = (): PagedListScript => ({
      cap: 4,
      nextLink: (request, next) => {
        if (next === null) return null;
        const link = new URL(next);
        // A server counting pages, not records: offsets are page numbers.
        link.searchParams.set("offset", String(request.offset + 1));
        return link.href;
      },
    });
    const { concurrent, sequential, concurrentServer } = await bothReads(12, script);
    expect(concurrent).toEqual(sequential);
    // Page "1" repeats three records of page 0: each read stops there, not at the count's end.
    expect(concurrent).toMatchObject({ code: "list_changed_during_read" });
    expect(concurrentServer.seen.map((request) => request.offset)).toEqual([0, 1, 0, 1, 0, 1]);
  });

  it("refuses a list whose count is higher than its records, as a walk does, asking a bounded number of pages", async () => {
    const script = (): PagedListScript => ({ cap: 3, countError: 30, holdUntilInFlight: 2 });
    const { concurrent, sequential, concurrentServer } = await bothReads(10, script, { concurrency: 4 });
    expect(concurrent).toMatchObject({ code: "list_changed_during_read" });
    expect(concurrent).toEqual(sequential);
    // Each read asks at most the window's worth of pages past the end.
    expect(concurrentServer.seen.length).toBeLessThanOrEqual(LIST_READ_ATTEMPTS * (4 + 4));
    expect(concurrentServer.maxInFlight).toBeGreaterThan(1);
  });

  it("refuses a list whose count is lower than its records, as a walk does", async () => {
    // count 7 of 20 in pages of 3: each read stops at the third page, whose link goes past 7.
    const script = (): PagedListScript => ({ cap: 3, countError: -13, holdUntilInFlight: 2 });
    const { concurrent, sequential, concurrentServer } = await bothReads(20, script);
    expect(concurrent).toMatchObject({ code: "list_changed_during_read" });
    expect(concurrent).toEqual(sequential);
    expect(concurrentServer.maxInFlight).toBeGreaterThan(1);
  });

  it("does not report a failure of a page past the end of the list", async () => {
    // count says 30 of 10: the pages past 10 fail for good, but the walk ends at 9 and the read
    // is refused for its count, as a walk would refuse it.
    const script = (): PagedListScript => ({
      cap: 3,
      countError: 20,
      fail: (request) => (request.offset >= 12 ? 500 : undefined),
    });
    const { concurrent, sequential, concurrentServer } = await bothReads(10, script);
    expect(concurrent).toMatchObject({ code: "list_changed_during_read" });
    expect(concurrent).toEqual(sequential);
    expect(concurrentServer.seen.some((request) => request.offset >= 12)).toBe(true);
  });

  it("refuses a hostile next link on a later page, and never follows it", async () => {
    const elsewhere = await serve(records(3));
    for (const [link, code] of [
      [`${elsewhere.url}/api/projects/1/plugin_configs/?offset=9`, "foreign_next_link"],
      ["/api/projects/2/plugin_configs/?offset=9", "next_link_off_collection"],
    ] as const) {
      const script = (): PagedListScript => ({
        cap: 3,
        holdUntilInFlight: 2,
        nextLink: (request, next) => (request.offset === 6 ? link : next),
      });
      const { concurrent, sequential, concurrentServer } = await bothReads(20, script);
      expect(concurrent).toMatchObject({ code });
      expect(concurrent).toEqual(sequential);
      expect(concurrentServer.maxInFlight).toBeGreaterThan(1);
    }
    expect(elsewhere.seen).toEqual([]);
  });

  it("reads a list again when its count changed between pages", async () => {
    let deleted = false;
    const server = await serve(records(20), {
      cap: 3,
      holdUntilInFlight: 2,
      afterServing: (request, items) => {
        if (request.offset === 0 && !deleted) {
          deleted = true;
          items.splice(1, 1);
        }
      },
    });
    const { client, trace } = clientFor(server);
    const listed = idsOf(await listAllConfigs(client, "1", "plugin_configs"));
    expect(listed).toEqual(idsOf(records(20)).filter((id) => id !== 2));
    expect(trace.join("\n")).toMatch(
      /the count went from 20 to 19 between pages 1 and 2\); reading it again/,
    );
    expect(server.maxInFlight).toBeGreaterThan(1);
  });

  it("reads a list again when a record moved between pages (count unchanged)", async () => {
    let moved = false;
    const server = await serve(records(20), {
      cap: 3,
      holdUntilInFlight: 2,
      // Record 2 moves to the end once the first page is out: the pages by offset read it twice.
      afterServing: (request, items) => {
        if (request.offset === 0 && !moved) {
          moved = true;
          items.push(...items.splice(1, 1));
        }
      },
    });
    const { client, trace } = clientFor(server);
    const listed = idsOf(await listAllConfigs(client, "1", "plugin_configs"));
    expect(listed).toEqual([1, ...idsOf(records(18, 3)), 2]);
    expect(trace.join("\n")).toMatch(/id 2 is listed on pages 1 and 7\); reading it again/);
    expect(server.maxInFlight).toBeGreaterThan(1);
  });
});

describe("stopping a read by offset", () => {
  it("asks for no page once the client's signal aborts, and settles every page asked", async () => {
    const controller = new AbortController();
    const server = await serve(records(60), {
      cap: 3,
      // The first page out aborts the run while the next pages are in flight or waiting for a slot.
      afterServing: (request) => {
        if (request.offset === 3) controller.abort(new Error("stopped by the test"));
      },
      delayMs: () => 5,
    });
    const made = testClient(server.url, { pageSize: 3, concurrency: 2, signal: controller.signal });
    clients.push(made.client);
    const error = await listAllConfigs(made.client, "1", "plugin_configs").catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "request_aborted" });
    // The first page, the two asked together, and at most one that replaced the first answered.
    expect(server.seen.map((request) => request.offset).slice(0, 3)).toEqual(
      expect.arrayContaining([0, 3, 6]),
    );
    expect(server.seen.length).toBeLessThanOrEqual(4);
    expect(made.client.limiter.state).toMatchObject({ inFlight: 0, queued: 0 });
  });
});

describe("reading by offset against any scripted server (property)", () => {
  it("equals the walk along `next` for a list that holds still, whatever the paging quirks", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          length: fc.integer({ min: 0, max: 40 }),
          pageSize: fc.integer({ min: 2, max: 12 }),
          cap: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
          concurrency: fc.integer({ min: 1, max: 5 }),
          shortAt: fc.option(fc.nat({ max: 40 }), { nil: undefined }),
          failAt: fc.option(fc.tuple(fc.nat({ max: 40 }), fc.constantFrom(429, 503)), { nil: undefined }),
          countError: fc.constantFrom(0, 0, 0, 1, -1, 7),
          delays: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 8, maxLength: 8 }),
        }),
        async (shape) => {
          const failedOnce = new Set<number>();
          const script = (): PagedListScript => {
            failedOnce.clear();
            return {
              ...(shape.cap === undefined ? {} : { cap: shape.cap }),
              countError: shape.countError,
              shortPage: (request) => (request.offset === shape.shortAt ? 1 : undefined),
              fail: (request) => {
                if (
                  shape.failAt === undefined ||
                  request.offset !== shape.failAt[0] ||
                  failedOnce.has(request.offset)
                ) {
                  return undefined;
                }
                failedOnce.add(request.offset);
                return shape.failAt[1];
              },
              delayMs: (request) => shape.delays[request.index % shape.delays.length] ?? 0,
            };
          };
          const options = { pageSize: shape.pageSize, concurrency: shape.concurrency };
          const { concurrent, sequential, concurrentServer } = await bothReads(shape.length, script, options);
          expect(concurrent).toEqual(sequential);
          if (shape.countError === 0) expect(concurrent).toEqual({ ids: idsOf(records(shape.length)) });
          expect(concurrentServer.maxInFlight).toBeLessThanOrEqual(shape.concurrency);
          await Promise.all(servers.splice(0).map((server) => server.close()));
          await Promise.all(clients.splice(0).map((client) => client.close()));
        },
      ),
      { numRuns: 20 },
    );
  });

  it("hands over one state the list had, when one record is deleted, inserted or moved while it is read", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.nat({ max: 12 }),
        fc.constantFrom("delete", "insert", "move"),
        fc.nat(),
        fc.nat(),
        async (length, cap, afterRequest, change, from, to) => {
          const before = records(length);
          let after: number[] = idsOf(before);
          const server = await serve([...before], {
            cap,
            delayMs: (request) => (request.index * 7) % 4,
            afterServing: (request, items) => {
              if (request.index !== afterRequest) return;
              const at = from % items.length;
              if (change === "delete") items.splice(at, 1);
              else if (change === "insert") items.splice(to % (items.length + 1), 0, record(1000));
              else items.splice(to % items.length, 0, ...items.splice(at, 1));
              after = idsOf(items);
            },
          });
          const { client } = clientFor(server, { concurrency: 3 });
          const listed = idsOf(await listAllConfigs(client, "1", "plugin_configs"));
          expect([idsOf(before), after]).toContainEqual(listed);
          await Promise.all(servers.splice(0).map((s) => s.close()));
          await Promise.all(clients.splice(0).map((c) => c.close()));
        },
      ),
      { numRuns: 30 },
    );
  });
});
