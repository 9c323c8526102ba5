// The retry policy's arithmetic: backoff bounds and the service's wait time; and which failed
// attempts of a write it notes as unanswered (the first may still be applied late).

import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/api/rate-limiter.js";
import {
  backoffDelayMs,
  parseRetryAfter,
  parseThrottleDetail,
  type RetryContext,
  sendWithRetry,
} from "../../src/api/retry.js";
import { type AttemptResponse, TransportFailure } from "../../src/http/transport.js";

describe("retry policy", () => {
  it("draws full-jitter backoff from [0, min(cap, base * 2^(n-1))]", () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([1, 2, 3, 4, 5, 10].map((n) => backoffDelayMs(n, options, () => 0.999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelayMs(3, options, () => 0)).toBe(0);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2024-06-01T00:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3_000);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1_500);
    expect(parseRetryAfter("Sat, 01 Jun 2024 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Fri, 31 May 2024 00:00:10 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it("reads the wait from the throttled detail", () => {
    expect(parseThrottleDetail("Request was throttled. Expected available in 3 seconds.")).toBe(3_000);
    expect(parseThrottleDetail("Request was throttled. Expected available in 1 second.")).toBe(1_000);
    expect(parseThrottleDetail("Request was throttled.")).toBeUndefined();
  });
});

describe("an update or delete that went unanswered, then was sent again", () => {
  const timeout = () =>
    new TransportFailure({
      kind: "timeout",
      reason: "timeout",
      description: "no answer in time",
      sent: true,
      retryable: true,
      phase: "headers",
    });
  const refusedToConnect = () =>
    new TransportFailure({
      kind: "unreachable",
      reason: "ECONNREFUSED",
      description: "connection refused",
      sent: false,
      retryable: true,
      phase: "connect",
    });
  const answer = (status: number, headers: Record<string, string> = {}, body = "{}") => ({
    status,
    headers,
    body: Buffer.from(body),
  });
  /** The service's own error envelope: the service answered, and is done with the request. */
  const ENVELOPE = '{"type":"server_error","code":"error","detail":"A server error occurred.","attr":null}';

  async function lastUnanswered(
    method: string,
    first: AttemptResponse | TransportFailure,
    fiveXxInFlight = false,
  ) {
    const stats: RetryContext["stats"] = { retries: 0, throttled: 0 };
    await send(method, [first, answer(200)], stats, fiveXxInFlight);
    return stats.lastUnansweredWriteAt;
  }

  function send(
    method: string,
    attempts: (AttemptResponse | TransportFailure)[],
    stats: RetryContext["stats"] = { retries: 0, throttled: 0 },
    fiveXxInFlight = false,
  ) {
    return sendWithRetry(
      {
        limiter: {
          acquire: async () => () => undefined,
          noteThrottled: () => undefined,
        } as unknown as RateLimiter,
        options: { retries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 60_000 },
        proofRules: { fiveXxInFlight },
        signal: undefined,
        stats,
        random: () => 0,
        now: () => 1_000,
        sleep: async () => undefined,
        trace: () => undefined,
      },
      {
        failedRequest: { method, path: "/api/projects/1/plugin_configs/1/" },
        traceLabel: method,
        safety: method === "POST" ? "unsafe" : "idempotent",
        notFoundMeansDone: method === "DELETE",
        send: async () => {
          const next = attempts.shift() ?? answer(200);
          if (next instanceof TransportFailure) throw next;
          return next;
        },
      },
    );
  }

  // The same table as a failed create's (test/api/attempt-proof.test.ts): whatever may still commit.
  it.each([
    ["PATCH", "a timeout", timeout(), 1_000],
    ["DELETE", "a 504", answer(504), 1_000],
    ["PATCH", "a 502", answer(502), 1_000],
    ["PATCH", "a 503 without Retry-After (a proxy's page)", answer(503), 1_000],
    ["PATCH", "a 500 that is not the service's (a proxy's page; not sent again)", answer(500), 1_000],
    ["PATCH", "a 503 with the service's body (answered: done with it)", answer(503, {}, ENVELOPE), undefined],
    ["PATCH", "a 500 with the service's body (answered)", answer(500, {}, ENVELOPE), undefined],
    [
      "PATCH",
      "a 503 with Retry-After (refused before processing)",
      answer(503, { "retry-after": "0" }),
      undefined,
    ],
    ["PATCH", "a refused connection (never sent)", refusedToConnect(), undefined],
    ["PATCH", "a 429", answer(429, { "retry-after": "0" }), undefined],
    ["PATCH", "a 409 (refused)", answer(409), undefined],
    ["GET", "a timeout of a read", timeout(), undefined],
  ])("%s after %s", async (method, _what, first, expected) => {
    expect(await lastUnanswered(method, first)).toBe(expected);
  });

  it("says a write's outcome is unknown when any of its attempts may still commit, the last included", async () => {
    const four = (make: () => AttemptResponse | TransportFailure) => Array.from({ length: 4 }, make);
    const unknown = async (attempts: (AttemptResponse | TransportFailure)[]) =>
      (await send("PATCH", attempts)).outcomeUnknown;
    expect(await unknown(four(() => answer(503, {}, ENVELOPE)))).toBe(false);
    expect(await unknown(four(() => answer(503, { "retry-after": "0" })))).toBe(false);
    expect(await unknown([timeout(), ...four(() => answer(503, {}, ENVELOPE))])).toBe(true);
    expect(await unknown([answer(500)])).toBe(true);
    expect(await unknown([answer(500, {}, ENVELOPE)])).toBe(false);
    expect(await send("DELETE", [answer(502), answer(404)])).toMatchObject({ done: true });
    expect(await send("DELETE", [answer(503, { "retry-after": "0" }), answer(404)])).toMatchObject({
      done: false,
    });
    expect((await send("GET", four(timeout))).outcomeUnknown).toBe(false);
  });

  it("takes every 5xx for one that may still land with --treat-5xx-as-in-flight", async () => {
    expect(await lastUnanswered("PATCH", answer(503, {}, ENVELOPE), true)).toBe(1_000);
    expect(await lastUnanswered("PATCH", answer(500, {}, ENVELOPE), true)).toBe(1_000);
    expect(await lastUnanswered("PATCH", answer(503, { "retry-after": "0" }), true)).toBe(1_000);
    expect(await lastUnanswered("PATCH", answer(429, { "retry-after": "0" }), true)).toBeUndefined();
  });
});

describe("a key throttled for longer than the client waits (an hourly limit spent)", () => {
  const THROTTLED =
    '{"type":"throttled_error","code":"throttled","detail":"Request was throttled. Expected available in 3600 seconds.","attr":null}';

  it("sends no request after that answer until the stated time, and says until when", async () => {
    let now = 1_000;
    let sent = 0;
    const stats: RetryContext["stats"] = { retries: 0, throttled: 0 };
    const context: RetryContext = {
      limiter: {
        acquire: async () => () => undefined,
        noteThrottled: () => undefined,
      } as unknown as RateLimiter,
      options: { retries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 90_000 },
      proofRules: { fiveXxInFlight: false },
      signal: undefined,
      stats,
      random: () => 0,
      now: () => now,
      sleep: async () => undefined,
      trace: () => undefined,
    };
    const request = (method: string) => ({
      failedRequest: { method, path: "/api/projects/1/plugin_configs/" },
      traceLabel: method,
      safety: method === "POST" ? ("unsafe" as const) : ("idempotent" as const),
      send: async () => {
        sent += 1;
        return { status: 429, headers: {}, body: Buffer.from(THROTTLED) };
      },
    });
    // The answer itself: refused, not sent again (its wait is beyond the client's longest).
    expect((await sendWithRetry(context, request("POST"))).response?.status).toBe(429);
    expect(sent).toBe(1);
    expect(stats.throttledUntil).toBe(1_000 + 3_600_000);
    for (const method of ["GET", "PATCH", "POST"]) {
      const refused = await sendWithRetry(context, request(method)).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: "request_throttled", outcomeUnknown: false });
      expect(String((refused as Error).message)).toContain(
        `not sent: the service throttled this API key until ${new Date(3_601_000).toISOString()}`,
      );
    }
    expect(sent).toBe(1);
    // Once that time has come, requests go out again.
    now = 3_601_000;
    await sendWithRetry(context, request("GET"));
    expect(sent).toBe(2);
  });
});
