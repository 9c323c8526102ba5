// The settle rule of createConfig (src/api/create-config.ts) on an injected clock: a POST whose
// outcome is unknown is never sent again until a re-read that started after the settle window
// (two and a half request timeouts, at least 1 s, from the give-up) shows it did not commit.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createConfigDetailed,
  MIN_SETTLE_WINDOW_MS,
  type OutcomeUnknownError,
  RequestError,
  settleWindowMs,
} from "../../src/api/index.js";
import {
  page,
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
  testClient,
} from "../support/scripted-server.js";

let server: ScriptedServer;
const closers: Array<() => Promise<void>> = [];
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await server.close();
});

/** A clock that moves only when someone sleeps (or the server says time passed). */
function fakeClock() {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

interface Scripted {
  /** Answers the POST numbered `index` (from 0); may commit the record, visible from `visibleAt`. */
  post: (index: number, commit: (visibleAt: number) => void) => { status: number } | "created";
  /** Fails the read at this clock time, if it returns a status. */
  failRead?: (now: number) => number | undefined;
}

/** The service of one family whose POSTs and reads each test scripts; `log` holds each request with the clock time. */
function script(clock: ReturnType<typeof fakeClock>, scripted: Scripted) {
  const stored: Array<{ record: Record<string, unknown>; visibleAt: number }> = [];
  const log: Array<{ method: string; at: number }> = [];
  let posts = 0;
  let nextId = 100;
  server.setHandler((request, response) => {
    log.push({ method: request.method, at: clock.now() });
    if (request.method === "GET") {
      const failure = scripted.failRead?.(clock.now());
      if (failure !== undefined) return sendJson(response, failure, { detail: "read failed" });
      const visible = stored.filter((item) => item.visibleAt <= clock.now()).map((item) => item.record);
      return sendJson(response, 200, page(visible));
    }
    const body = JSON.parse(request.body) as Record<string, unknown>;
    const made = record(nextId++, body);
    const answer = scripted.post(posts++, (visibleAt) => stored.push({ record: made, visibleAt }));
    if (answer === "created") {
      stored.push({ record: made, visibleAt: clock.now() });
      return sendJson(response, 201, made);
    }
    sendJson(response, answer.status, { detail: "unavailable" });
  });
  return { log, stored };
}

function client(
  clock: ReturnType<typeof fakeClock>,
  requestTimeoutMs = 2_000,
  signal?: AbortSignal,
  settleTimeoutMs?: number,
) {
  const made = testClient(server.url, {
    now: clock.now,
    sleep: clock.sleep,
    requestTimeoutMs,
    ...(signal === undefined ? {} : { signal }),
    ...(settleTimeoutMs === undefined ? {} : { settleTimeoutMs }),
  });
  closers.push(() => made.client.close());
  return made.client;
}

const BODY = { plugin: 12, order: 1, name: "New", enabled: true };
const create = (apiClient: ReturnType<typeof client>) =>
  createConfigDetailed(apiClient, "1", "plugin_configs", BODY, { knownIds: new Set() });

describe("the settle window", () => {
  it("is two and a half request timeouts, and never less than 1 s", () => {
    expect(settleWindowMs(30_000)).toBe(75_000);
    expect(settleWindowMs(2_000)).toBe(5_000);
    expect(settleWindowMs(100)).toBe(MIN_SETTLE_WINDOW_MS);
  });
});

describe("the settle time of one create", () => {
  it("at defaults, ends 120 s after the first give-up, not a 75 s window for each of five POSTs", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 503 }) });
    // --timeout 30: a window of 75 s; the first proves the POST absent, the second is cut at 120 s.
    const apiClient = client(clock, 30_000);
    expect(apiClient.settleTimeoutMs).toBe(120_000);
    const error = await create(apiClient).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as OutcomeUnknownError).conclusiveAfter).toBe(75_000 + 75_000);
    expect((error as Error).message).toContain(
      "The record may or may not have been created: the settle time of 120 s (--settle-timeout) ended before the window that proves a create was not made (75 s: 2.5 times --timeout, at least 1 s) had closed, and re-reading the family until then found no record made by it; it was not sent again.",
    );
    expect(log.filter((entry) => entry.method === "POST").map((entry) => entry.at)).toEqual([0, 75_000]);
    expect(log.at(-1)).toEqual({ method: "GET", at: 120_000 });
  });

  it("sends no POST once it is over, and reports the create not made when every window closed", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 503 }) });
    // Windows of 5 s fit twice in 10 s: two POSTs shown not made, and no third.
    const error = await create(client(clock, 2_000, undefined, 10_000)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ outcomeUnknown: false, method: "POST" });
    expect((error as Error).message).toMatch(/the create was sent 2 times, and re-reading the family/);
    expect(log.filter((entry) => entry.method === "POST").map((entry) => entry.at)).toEqual([0, 5_000]);
  });

  it("still adopts a record that lands inside a cut window", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (_index, commit) => {
        commit(clock.now() + 2_500);
        return { status: 504 };
      },
    });
    const result = await create(client(clock, 2_000, undefined, 3_000));
    expect(result).toMatchObject({ posts: 1, adopted: true, record: { id: 100 } });
    expect(log.filter((entry) => entry.method === "POST")).toHaveLength(1);
    expect(log.at(-1)?.at).toBeLessThanOrEqual(3_000);
  });
});

describe("a POST whose outcome is unknown", () => {
  it("that commits 2x the timeout after the give-up is found by a re-read and never sent again", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (_index, commit) => {
        commit(clock.now() + 2 * 2_000);
        return { status: 504 };
      },
    });
    const result = await create(client(clock));
    expect(result).toMatchObject({ posts: 1, adopted: true, uncertain: true, record: { id: 100 } });
    expect(log.filter((entry) => entry.method === "POST")).toHaveLength(1);
    // Read at once, then with backoff, until one after the commit found it: the last one, at the
    // window's end, would have allowed a resend had it not.
    const reads = log.filter((entry) => entry.method === "GET").map((entry) => entry.at);
    expect(reads).toEqual([0, 250, 750, 1_750, 3_750, 5_000]);
  });

  it("is sent again only after a read that started once the window, measured from the give-up, closed", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (index) => {
        if (index > 0) return "created";
        // A slow proxy: the answer (504) comes 3 s after the send. The window starts then.
        clock.advance(3_000);
        return { status: 504 };
      },
    });
    const result = await create(client(clock));
    expect(result).toMatchObject({ posts: 2, adopted: false, uncertain: true, record: { id: 101 } });
    const [first, ...rest] = log;
    expect(first).toEqual({ method: "POST", at: 0 });
    const resend = rest.findIndex((entry) => entry.method === "POST");
    const readsBefore = rest.slice(0, resend);
    expect(readsBefore.length).toBeGreaterThan(1);
    expect(readsBefore.every((entry) => entry.method === "GET")).toBe(true);
    // Give-up at 3 s, window 5 s: the deciding read started at 8 s, not at 5 s after the send.
    expect(readsBefore.at(-1)?.at).toBe(8_000);
    expect(rest[resend]?.at).toBe(8_000);
  });

  it("waits at least 1 s however small the timeout", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: (index) => (index > 0 ? "created" : { status: 503 }) });
    await create(client(clock, 100));
    const posts = log.filter((entry) => entry.method === "POST").map((entry) => entry.at);
    expect(posts).toEqual([0, MIN_SETTLE_WINDOW_MS]);
  });

  it("is not decided by reads that fail inside the window; the read after it decides", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (index) => (index > 0 ? "created" : { status: 502 }),
      failRead: (now) => (now < 5_000 ? 500 : undefined),
    });
    const result = await create(client(clock));
    expect(result.posts).toBe(2);
    expect(log.filter((entry) => entry.method === "POST").map((entry) => entry.at)).toEqual([0, 5_000]);
  });

  it("fails definitively, saying how often it was sent, when every POST is found not made", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 503 }) });
    const apiClient = client(clock);
    const error = await create(apiClient).catch((caught: unknown) => caught);
    const posts = log.filter((entry) => entry.method === "POST").length;
    expect(posts).toBe(apiClient.retryOptions.retries + 1);
    expect(error).toBeInstanceOf(RequestError);
    expect(error).toMatchObject({ outcomeUnknown: false, method: "POST" });
    expect((error as Error).message).toMatch(
      new RegExp(
        `^503 POST /api/projects/1/plugin_configs/: unavailable.*; the create was sent ${posts} times, and re-reading the family after each settle window found no record made by it$`,
      ),
    );
  });

  it("is unknown, and never sent again, when no read after the window succeeds", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: () => ({ status: 503 }),
      failRead: () => 500,
    });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as OutcomeUnknownError).conclusiveAfter).toBe(5_000);
    expect((error as Error).message).toMatch(
      /^503 POST \/api\/projects\/1\/plugin_configs\/: unavailable\. The record may or may not have been created: re-reading the family to check failed \(500 GET .*\)\. Run `pcsync plan` once the service answers to see whether it exists\.$/,
    );
    expect(log.filter((entry) => entry.method === "POST")).toHaveLength(1);
    expect(log.at(-1)).toEqual({ method: "GET", at: 5_000 });
  });

  it("is unknown at once when the run is interrupted while it settles", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const { log } = script(clock, {
      post: () => ({ status: 503 }),
      // The signal comes while the first re-read is answered.
      failRead: () => {
        controller.abort();
        return undefined;
      },
    });
    const error = await create(client(clock, 2_000, controller.signal)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as Error).message).toContain(
      "the run was interrupted before re-reading the family could settle it",
    );
    expect(log.map((entry) => entry.method)).toEqual(["POST", "GET"]);
  });
});
