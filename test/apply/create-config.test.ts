// The rule of createConfigDetailed (src/apply/create-config.ts) on an injected clock, by what each failure
// proves: a POST the service answered is decided by one re-read; one still in flight is never sent
// again until a re-read that started after the proof window (two and a half request timeouts, at
// least 1 s, from the give-up) shows it did not commit; a create sends 3 POSTs at most.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApiClientOptions, ServiceError } from "../../src/api/index.js";
import { createConfigDetailed } from "../../src/apply/create-config.js";
import {
  CREATE_POSTS,
  type CreateRule,
  MIN_SETTLE_WINDOW_MS,
  minimumSettleTimeoutMs,
  settleBudgetOf,
  settleWindowMs,
} from "../../src/apply/proof-window.js";
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

interface Answer {
  status: number;
  /** Default: a body that is not the service's envelope (`{detail}` only), as a proxy may send. */
  body?: unknown;
  headers?: Record<string, string>;
}

interface Scripted {
  /** Answers the POST numbered `index` (from 0); may commit the record, visible from `visibleAt`. */
  post: (index: number, commit: (visibleAt: number) => void) => Answer | "created";
  /** Fails the read at this clock time, if it returns a status. */
  failRead?: (now: number) => number | undefined;
}

/** The service's own error body, as it answers a 500 or 503. */
const ENVELOPE = { type: "server_error", code: "error", detail: "A server error occurred.", attr: null };

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
    sendJson(response, answer.status, answer.body ?? { detail: "unavailable" }, answer.headers);
  });
  return { log, stored };
}

const at = (log: Array<{ method: string; at: number }>, method: string) =>
  log.filter((entry) => entry.method === method).map((entry) => entry.at);

// The clock is injected, so the tests run at the CLI's real defaults (--timeout 30: a proof window
// of 75 s) without waiting for them, and every ratio is the one users get.
function client(
  clock: ReturnType<typeof fakeClock>,
  requestTimeoutMs = 30_000,
  signal?: AbortSignal,
  more: Partial<ApiClientOptions> = {},
) {
  const made = testClient(server.url, {
    now: clock.now,
    sleep: clock.sleep,
    requestTimeoutMs,
    bodyTimeoutMs: requestTimeoutMs,
    ...(signal === undefined ? {} : { signal }),
    ...more,
  });
  closers.push(() => made.client.close());
  return made.client;
}

const BODY = { plugin: 12, order: 1, name: "New", enabled: true };
const create = (apiClient: ReturnType<typeof client>, rule: CreateRule = {}) =>
  createConfigDetailed(apiClient, "1", "plugin_configs", BODY, { knownIds: new Set(), ...rule });

describe("the settle window", () => {
  it("is two and a half request timeouts, and never less than 1 s", () => {
    expect(settleWindowMs(30_000)).toBe(75_000);
    expect(settleWindowMs(2_000)).toBe(5_000);
    expect(settleWindowMs(100)).toBe(MIN_SETTLE_WINDOW_MS);
  });

  it("shrinks with the time scale, floor included, keeping the defaults' proportions", () => {
    expect(settleWindowMs(300, 0.01)).toBe(750);
    expect(settleWindowMs(1, 0.01)).toBe(10);
  });
});

describe("the settle time of one create", () => {
  it("holds a whole proof window for each of the 3 POSTs in flight allowed (225 s at --timeout 30)", () => {
    const clock = fakeClock();
    const apiClient = client(clock);
    expect(CREATE_POSTS).toBe(3);
    expect(settleBudgetOf(apiClient).settleTimeoutMs).toBe(minimumSettleTimeoutMs(30_000, 3));
    expect(settleBudgetOf(apiClient).settleTimeoutMs).toBe(225_000);
  });

  it("cannot be set below the windows it must hold", () => {
    const clock = fakeClock();
    expect(() => settleBudgetOf(client(clock), { settleTimeoutMs: 120_000 })).toThrow(
      /settleTimeoutMs must be at least 225000/,
    );
    expect(settleBudgetOf(client(clock), { settleTimeoutMs: 225_000 }).settleTimeoutMs).toBe(225_000);
  });

  it("lets a create survive two POSTs lost in flight: each window runs to its end, the third POST makes it", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: (index) => (index < 2 ? { status: 504 } : "created") });
    const result = await create(client(clock));
    expect(result).toMatchObject({ posts: 3, adopted: false, uncertain: true, record: { id: 102 } });
    expect(result.failures).toEqual(["in_flight", "in_flight"]);
    // Each resend waits for a read started after its own 75 s window.
    expect(at(log, "POST")).toEqual([0, 75_000, 150_000]);
  });

  it("sends at most 3 POSTs in flight, and reports the create not made once every window showed so", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 504 }) });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ outcomeUnknown: false, method: "POST" });
    expect((error as Error).message).toMatch(
      /^504 POST \/api\/projects\/1\/plugin_configs\/: unavailable.*; the create was sent 3 times, and none of them made the record \(re-reading the family showed so\); it was not sent again, since 3 of them went unanswered \(a proxy's 502 or 504, a timeout, a lost connection\), each waited out for 75 s: apply again once the service answers$/,
    );
    expect(at(log, "POST")).toEqual([0, 75_000, 150_000]);
    // The last window is not cut: its deciding read starts at its end, 225 s.
    expect(log.at(-1)).toEqual({ method: "GET", at: 225_000 });
  });

  it("sends no POST that a stated pause would push past the settle time", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: () => ({ status: 503, body: ENVELOPE, headers: { "retry-after": "300" } }),
    });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ outcomeUnknown: false });
    expect((error as Error).message).toMatch(/it was not sent again, since the service asked to wait 300 s/);
    expect(at(log, "POST")).toEqual([0]);
  });
});

describe("a POST the service answered with its own error", () => {
  for (const status of [500, 503]) {
    it(`(${status}) that committed first is found by one re-read and counted created, never sent again`, async () => {
      const clock = fakeClock();
      const { log } = script(clock, {
        post: (_index, commit) => {
          commit(clock.now());
          return { status, body: ENVELOPE };
        },
      });
      const result = await create(client(clock));
      expect(result).toMatchObject({ posts: 1, adopted: true, record: { id: 100 } });
      expect(result.failures).toEqual(["answered"]);
      expect(log.map((entry) => entry.method)).toEqual(["POST", "GET"]);
      expect(clock.now()).toBe(0);
    });

    it(`(${status}) that did not commit is sent again after one re-read and a backoff, not a 75 s window`, async () => {
      const clock = fakeClock();
      const { log } = script(clock, {
        post: (index) => (index === 0 ? { status, body: ENVELOPE } : "created"),
      });
      const result = await create(client(clock));
      expect(result).toMatchObject({ posts: 2, adopted: false, record: { id: 101 } });
      expect(log.map((entry) => entry.method)).toEqual(["POST", "GET", "POST"]);
      // Full jitter of the first backoff (250 ms) at the test's random 0.5.
      expect(at(log, "POST")).toEqual([0, 125]);
    });
  }

  it("is sent 9 times at most (the client's retries + 1), each after one re-read showed it not made", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 503, body: ENVELOPE }) });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 503, outcomeUnknown: false });
    expect((error as Error).message).toMatch(/the create was sent 9 times, and none of them made the record/);
    expect(log.map((entry) => entry.method).join(" ")).toBe(Array(9).fill("POST GET").join(" "));
    // Backoffs only: tens of seconds, not windows of 75 s each.
    expect(clock.now()).toBeLessThan(60_000);
  });

  it("is unknown, and never sent again, when its one re-read fails", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 500, body: ENVELOPE }), failRead: () => 404 });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as Error).message).toMatch(
      /The record may or may not have been created: the service answered it with its own error, and re-reading the family to check failed/,
    );
    expect(at(log, "POST")).toEqual([0]);
  });

  it("is reported not made, and not sent again, when the run is interrupted before the resend", async () => {
    const clock = fakeClock();
    const controller = new AbortController();
    const { log } = script(clock, {
      post: () => ({ status: 500, body: ENVELOPE }),
      // The signal comes while the one re-read is answered: the resend's backoff never ends.
      failRead: () => {
        controller.abort();
        return undefined;
      },
    });
    const error = await create(client(clock, 30_000, controller.signal)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 500, outcomeUnknown: false });
    expect((error as Error).message).toMatch(
      /it did not make the record \(re-reading the family showed so\); the run was interrupted before it was sent again$/,
    );
    expect(log.map((entry) => entry.method)).toEqual(["POST", "GET"]);
  });

  it("is taken for in flight with --treat-5xx-as-in-flight: the whole window before a resend", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (index) => (index === 0 ? { status: 500, body: ENVELOPE } : "created"),
    });
    const result = await create(client(clock), { treat5xxAsInFlight: true });
    expect(result.failures).toEqual(["in_flight"]);
    expect(at(log, "POST")).toEqual([0, 75_000]);
  });
});

describe("settling a create", () => {
  it("goes ahead of the client's own pacing: the re-read and the resend do not wait their turn", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (index) => (index === 0 ? { status: 500, body: ENVELOPE } : "created"),
    });
    // One request per 10 s: paced, the re-read would wait until 10 s and the resend until 20 s.
    const result = await create(client(clock, 30_000, undefined, { maxRps: 0.1 }));
    expect(result.posts).toBe(2);
    expect(log).toEqual([
      { method: "POST", at: 0 },
      { method: "GET", at: 0 },
      { method: "POST", at: 125 },
    ]);
  });

  it("never goes ahead of a pause the service asked for", async () => {
    const clock = fakeClock();
    let apiClient: ReturnType<typeof client> | undefined;
    const { log } = script(clock, {
      post: (index) => {
        if (index > 0) return "created";
        // The service asks everyone to wait 4 s (another request's 429) just as this POST fails.
        apiClient?.limiter.noteThrottled(4_000);
        return { status: 500, body: ENVELOPE };
      },
    });
    apiClient = client(clock);
    await create(apiClient);
    expect(log.map((entry) => entry.method)).toEqual(["POST", "GET", "POST"]);
    expect(log.slice(1).every((entry) => entry.at >= 4_000)).toBe(true);
  });
});

describe("a POST refused before processing", () => {
  it("(503 with Retry-After) is confirmed by one re-read and sent again after the stated pause", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (index) => (index === 0 ? { status: 503, headers: { "retry-after": "3" } } : "created"),
    });
    const result = await create(client(clock));
    expect(result).toMatchObject({ posts: 2, adopted: false });
    expect(result.failures).toEqual(["refused"]);
    expect(log.map((entry) => entry.method)).toEqual(["POST", "GET", "POST"]);
    expect(at(log, "POST")).toEqual([0, 3_000]);
  });

  it("(503 with Retry-After) that did commit after all is adopted, not sent again", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (_index, commit) => {
        commit(clock.now());
        return { status: 503, headers: { "retry-after": "3" } };
      },
    });
    const result = await create(client(clock));
    expect(result).toMatchObject({ posts: 1, adopted: true });
    expect(at(log, "POST")).toEqual([0]);
  });

  it("(a 4xx) is not made, with no re-read and no resend", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: () => ({
        status: 400,
        body: { type: "validation_error", code: "required", detail: "x", attr: "plugin" },
      }),
    });
    const error = await create(client(clock)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, outcomeUnknown: false });
    expect(log.map((entry) => entry.method)).toEqual(["POST"]);
  });
});

describe("a POST still in flight", () => {
  for (const [what, answer] of [
    ["a 502 even with the service's body", { status: 502, body: ENVELOPE }],
    ["a 504", { status: 504 }],
    ["a 503 whose body is a proxy's page", { status: 503, body: "<html>Service Unavailable</html>" }],
    ["a 500 whose body is not the service's", { status: 500, body: { error: "upstream" } }],
  ] as const) {
    it(`(${what}) is sent again only after the whole proof window`, async () => {
      const clock = fakeClock();
      const { log } = script(clock, { post: (index) => (index === 0 ? answer : "created") });
      const result = await create(client(clock));
      expect(result.failures).toEqual(["in_flight"]);
      expect(at(log, "POST")).toEqual([0, 75_000]);
    });
  }
});

// --timeout 2: a proof window of 5 s.
describe("a POST whose outcome is unknown", () => {
  it("that commits 2x the timeout after the give-up is found by a re-read and never sent again", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: (_index, commit) => {
        commit(clock.now() + 2 * 2_000);
        return { status: 504 };
      },
    });
    const result = await create(client(clock, 2_000));
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
    const result = await create(client(clock, 2_000));
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
    const result = await create(client(clock, 2_000));
    expect(result.posts).toBe(2);
    expect(log.filter((entry) => entry.method === "POST").map((entry) => entry.at)).toEqual([0, 5_000]);
  });

  it("fails definitively, saying how often it was sent, when every POST is found not made", async () => {
    const clock = fakeClock();
    const { log } = script(clock, { post: () => ({ status: 503 }) });
    const apiClient = client(clock, 2_000);
    const error = await create(apiClient).catch((caught: unknown) => caught);
    const posts = log.filter((entry) => entry.method === "POST").length;
    expect(posts).toBe(CREATE_POSTS);
    expect(posts).toBe(3);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ outcomeUnknown: false, method: "POST" });
    expect((error as Error).message).toMatch(
      new RegExp(
        `^503 POST /api/projects/1/plugin_configs/: unavailable.*; the create was sent ${posts} times, and none of them made the record \\(re-reading the family showed so\\); it was not sent again, since ${CREATE_POSTS} of them went unanswered .*, each waited out for 5 s: apply again once the service answers$`,
      ),
    );
  });

  it("is unknown, and never sent again, when no read after the window succeeds", async () => {
    const clock = fakeClock();
    const { log } = script(clock, {
      post: () => ({ status: 503 }),
      failRead: () => 500,
    });
    const error = await create(client(clock, 2_000)).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "create_outcome_unknown" });
    expect((error as ServiceError<"create_outcome_unknown">).facts.conclusiveAfter).toBe(5_000);
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
