// The retry policy's arithmetic: backoff bounds and the service's wait time.

import { describe, expect, it } from "vitest";
import { backoffDelayMs, parseRetryAfter, parseThrottleDetail } from "../../src/api/retry.js";

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
