// The shared limiter on a fake clock: concurrency, rate, the server's wait, and AIMD.

import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/api/index.js";

function fakeClock() {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
    advance(ms: number) {
      now += ms;
    },
  };
}

describe("RateLimiter", () => {
  it("bounds the requests in flight and hands slots over in order", async () => {
    const limiter = new RateLimiter({ concurrency: 2 });
    const order: string[] = [];
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    const third = limiter.acquire().then((release) => {
      order.push("third");
      return release;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(limiter.state).toMatchObject({ inFlight: 2, queued: 1 });
    first();
    first(); // a second release of the same slot changes nothing
    (await third)();
    second();
    expect(order).toEqual(["third"]);
    expect(limiter.state).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it("spaces starts at maxRps after a burst of one second's worth", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, maxRps: 4, ...clock });
    const starts: number[] = [];
    for (let index = 0; index < 8; index += 1) {
      (await limiter.acquire())();
      starts.push(clock.now());
    }
    expect(starts).toEqual([0, 0, 0, 0, 250, 500, 750, 1000]);
  });

  it("makes every request wait the server's time after a 429, then halves the rate", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 8, increaseRpsPerSecond: 0, ...clock });
    limiter.noteThrottled(3_000);
    // A second 429 from a request already in flight does not halve again.
    limiter.noteThrottled(3_000);
    expect(limiter.state.pausedUntil).toBe(3_000);
    const starts: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      (await limiter.acquire())();
      starts.push(clock.now());
    }
    // 4 requests per second, no burst right after the pause.
    expect(starts).toEqual([3_000, 3_250, 3_500]);
    expect(limiter.state.rps).toBe(4);
  });

  it("recovers the rate additively until the ceiling", () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 8, increaseRpsPerSecond: 1, ...clock });
    limiter.noteThrottled(0);
    expect(limiter.state.rps).toBe(4);
    clock.advance(2_000);
    expect(limiter.state.rps).toBe(6);
    clock.advance(5_000);
    expect(limiter.state.rps).toBe(8);
  });

  it("without maxRps, lowers to half the rate that drew the 429 and then lifts the limit again", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, increaseRpsPerSecond: 2, ...clock });
    for (let index = 0; index < 20; index += 1) {
      (await limiter.acquire())();
      clock.advance(50);
    }
    expect(limiter.state.rps).toBe(Number.POSITIVE_INFINITY);
    limiter.noteThrottled(1_000);
    // 20 starts in one second drew the 429: continue at 10 per second.
    expect(limiter.state.rps).toBe(10);
    clock.advance(1_000 + 6_000);
    expect(limiter.state.rps).toBe(Number.POSITIVE_INFINITY);
  });

  it("moves a start already reserved when a 429 arrives meanwhile", async () => {
    let now = 0;
    let limiter: RateLimiter | undefined;
    let throttledOnce = false;
    limiter = new RateLimiter({
      concurrency: 1,
      maxRps: 1,
      now: () => now,
      sleep: async (ms) => {
        if (!throttledOnce) {
          throttledOnce = true;
          limiter?.noteThrottled(5_000);
        }
        now += ms;
      },
    });
    (await limiter.acquire())();
    (await limiter.acquire())();
    expect(now).toBeGreaterThanOrEqual(5_000);
  });
});
