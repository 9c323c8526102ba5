// The shared limiter on a fake clock: concurrency, rate, the server's wait, learning the server's
// limit from its 429s, probing upward again, and whole runs against simulated throttling servers.

import { describe, expect, it } from "vitest";
import { RateLimiter, type RateLimiterOptions } from "../../src/api/index.js";
import { SlidingWindowLimiter } from "../../src/emulator/rate-limiter.js";

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

/** Starts `count` requests `spacingMs` apart, each released at once. */
async function startRequests(
  limiter: RateLimiter,
  clock: ReturnType<typeof fakeClock>,
  count: number,
  spacingMs: number,
) {
  for (let index = 0; index < count; index += 1) {
    (await limiter.acquire())();
    clock.advance(spacingMs);
  }
}

/** A throttling service: undefined accepts the request, a number refuses it for that many seconds. */
type Throttle = (nowMs: number) => number | undefined;

/**
 * Runs `requests` requests through a limiter on a virtual clock (timers fire in time order once
 * every promise has settled), `concurrency` at once, each `latencyMs` long and judged by the
 * service half-way, retrying on 429 as the client does. Nothing here waits for real time.
 */
async function simulateRun(options: {
  throttle: Throttle;
  requests: number;
  concurrency?: number;
  latencyMs?: number;
  limiter?: Partial<RateLimiterOptions>;
}) {
  const { throttle, requests, concurrency = 8, latencyMs = 20 } = options;
  let now = 0;
  const timers: Array<{ at: number; resolve: () => void }> = [];
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => timers.push({ at: now + Math.max(0, ms), resolve }));
  const limiter = new RateLimiter({ concurrency, now: () => now, sleep, ...options.limiter });
  let accepted = 0;
  let refused = 0;
  let taken = 0;
  const worker = async () => {
    while (taken < requests) {
      taken += 1;
      for (;;) {
        const release = await limiter.acquire();
        await sleep(latencyMs / 2);
        const waitSeconds = throttle(now);
        await sleep(latencyMs / 2);
        release();
        if (waitSeconds === undefined) {
          accepted += 1;
          break;
        }
        refused += 1;
        limiter.noteThrottled(waitSeconds * 1000);
      }
    }
  };
  let finished = false;
  const run = Promise.all(Array.from({ length: concurrency }, worker)).then(() => {
    finished = true;
  });
  while (!finished) {
    await new Promise((resolve) => setImmediate(resolve));
    if (finished) break;
    timers.sort((a, b) => a.at - b.at);
    const timer = timers.shift();
    if (!timer) continue;
    now = Math.max(now, timer.at);
    timer.resolve();
  }
  await run;
  return { accepted, refused, seconds: now / 1000, limiter };
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

  it("learns the service's limit from the wait it states, and paces just under it after the wait", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, ...clock });
    // A client that starts too fast: 480 requests in 1.2 s, then "available in 59 seconds".
    await startRequests(limiter, clock, 480, 2.5);
    limiter.noteThrottled(59_000);
    const resumeAt = 1_200 + 59_000;
    expect(limiter.state.pausedUntil).toBe(resumeAt);
    // The refused request does not count: 479 accepted over a window of 60.2 s.
    const learned = 479 / 60.2;
    expect(limiter.state.learned?.rps).toBeCloseTo(learned, 6);
    expect(limiter.state.learned?.windowMs).toBe(60_200);

    const starts: number[] = [];
    for (let index = 0; index < 4; index += 1) {
      (await limiter.acquire())();
      starts.push(clock.now());
    }
    // Evenly spaced at 95% of the learned rate, starting when the wait ends: no burst.
    const interval = 1000 / (learned * 0.95);
    expect(starts[0]).toBe(resumeAt);
    expect((starts[3] ?? 0) - (starts[0] ?? 0)).toBeCloseTo(3 * interval, 0);
  });

  it("takes the 429s of requests already in flight as corrections, not as new decreases", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, ...clock });
    await startRequests(limiter, clock, 480, 2.5);
    limiter.noteThrottled(59_000);
    // Seven more requests sent before the first 429 arrived are refused too.
    for (let index = 0; index < 7; index += 1) {
      clock.advance(2.5);
      limiter.noteThrottled(59_000 - 2.5 * (index + 1));
    }
    expect(limiter.state.learned?.rps).toBeCloseTo(472 / 60.2, 6);
    expect(limiter.state.pausedUntil).toBe(60_200);
    clock.advance(60_200 - clock.now());
    expect(limiter.state.rps).toBeCloseTo((472 / 60.2) * 0.95, 6);
  });

  it("probes upward again by a tenth per learned window, up to maxRps", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, maxRps: 10, ...clock });
    await startRequests(limiter, clock, 60, 100);
    // 59 counted over a window that ends 4 s after the 6 s of requests: 5.9 per second.
    limiter.noteThrottled(4_000);
    expect(limiter.state.learned).toEqual({ rps: 5.9, windowMs: 10_000 });
    clock.advance(4_000);
    expect(limiter.state.rps).toBeCloseTo(5.9 * 0.95, 6);
    clock.advance(10_000);
    expect(limiter.state.rps).toBeCloseTo(5.9 * 0.95 * 1.1, 6);
    // Never above maxRps, whatever was learned; reaching it ends the throttled regime.
    clock.advance(60_000);
    expect(limiter.state.rps).toBe(10);
  });

  it("takes a wait longer than the learned window for a longer window (an hourly limit)", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 100, ...clock });
    await startRequests(limiter, clock, 100, 10);
    limiter.noteThrottled(59_000);
    expect(limiter.state.learned?.windowMs).toBe(60_000);
    clock.advance(59_000);
    await startRequests(limiter, clock, 50, 1_000);
    // Now "available in 50 minutes": nothing the one-minute window explains.
    limiter.noteThrottled(3_000_000);
    expect(limiter.state.learned?.windowMs).toBe(110_000 + 3_000_000);
    // The 59 s pause, which no request waited through, was idle: it leaves the count of time.
    expect(limiter.state.learned?.rps).toBeCloseTo(148 / (3_110 - 59), 6);
  });

  it("lets a request go ahead of those queued for a slot, in the order such requests came", async () => {
    const limiter = new RateLimiter({ concurrency: 1 });
    const order: string[] = [];
    const held = await limiter.acquire();
    const take = (name: string, ahead: boolean) =>
      limiter.acquire(undefined, { ahead }).then((release) => {
        order.push(name);
        release();
      });
    const all = [
      take("queued 1", false),
      take("queued 2", false),
      take("ahead 1", true),
      take("ahead 2", true),
    ];
    held();
    await Promise.all(all);
    expect(order).toEqual(["ahead 1", "ahead 2", "queued 1", "queued 2"]);
  });

  it("lets a request go ahead of the client's own pacing, but never ahead of the service's pause", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 1, ...clock });
    (await limiter.acquire())();
    (await limiter.acquire())();
    expect(clock.now()).toBe(1_000);
    // The next paced start would be at 2 s; a settle re-read starts now.
    (await limiter.acquire(undefined, { ahead: true }))();
    expect(clock.now()).toBe(1_000);
    // It took its place in the rate: the next paced start moves back by one interval.
    (await limiter.acquire())();
    expect(clock.now()).toBe(3_000);
    limiter.noteThrottled(5_000);
    (await limiter.acquire(undefined, { ahead: true }))();
    expect(clock.now()).toBe(8_000);
  });

  it("learns from busy time only: a 429 after a long idle settle does not teach its idle rate", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 8, ...clock });
    // 40 requests in 2 s, then a create settles: a re-read now and then over 75 s, idle between.
    await startRequests(limiter, clock, 40, 50);
    for (const gap of [250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 20_000, 23_250]) {
      clock.advance(gap);
      (await limiter.acquire())();
    }
    // One of the re-reads is refused, "available in 1 second". Counting the idle time would learn
    // 49 requests over 78 s: about 0.6 per second, and hold the rest of the run to it.
    limiter.noteThrottled(1_000);
    const learned = limiter.state.learned?.rps ?? 0;
    expect(learned).toBeGreaterThan(49 / 78 + 5);
    // Busy time is the 2 s of requests and the short gaps: 48 counted starts over about 5 s.
    expect(learned).toBeCloseTo(48 / ((2_000 + 250 + 500 + 1_000 + 1_000) / 1_000), 0);
  });

  it("counts a pause the service asked for as busy while requests wait through it", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 8, ...clock });
    await startRequests(limiter, clock, 40, 50);
    limiter.noteThrottled(5_000);
    // A request waits through the pause (the fake sleep moves the clock): not idle.
    (await limiter.acquire())();
    expect(limiter.idleMsBetween(0, clock.now())).toBe(0);
  });

  it("without a stated wait, halves the rate once per episode and recovers additively", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 8, increaseRpsPerSecond: 1, ...clock });
    await startRequests(limiter, clock, 5, 100);
    limiter.noteThrottled(3_000, { stated: false });
    // A second 429 from a request already in flight does not halve again.
    limiter.noteThrottled(3_000, { stated: false });
    expect(limiter.state.learned).toBeUndefined();
    expect(limiter.state.rps).toBe(4);
    clock.advance(3_000 + 2_000);
    expect(limiter.state.rps).toBe(6);
    clock.advance(5_000);
    expect(limiter.state.rps).toBe(8);
  });

  it("with nothing to learn from, still makes everyone wait and halves the rate", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 8, increaseRpsPerSecond: 0, ...clock });
    limiter.noteThrottled(3_000);
    limiter.noteThrottled(3_000);
    expect(limiter.state.pausedUntil).toBe(3_000);
    const starts: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      (await limiter.acquire())();
      starts.push(clock.now());
    }
    expect(starts).toEqual([3_000, 3_250, 3_500]);
    expect(limiter.state.rps).toBe(4);
  });

  it("with decreaseFactor 1, waits as told but never slows down", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, decreaseFactor: 1, ...clock });
    await startRequests(limiter, clock, 50, 1);
    limiter.noteThrottled(1_000);
    expect(limiter.state.pausedUntil).toBe(1_050);
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

describe("RateLimiter against throttling services (simulated runs)", () => {
  const allowedRps = 8;

  it("applies 2,000 requests at 480/minute (sliding window) with under 5% 429s at 90%+ of the rate", async () => {
    const window = new SlidingWindowLimiter({ perMinute: 480 });
    const run = await simulateRun({ throttle: (now) => window.take("key", now), requests: 2_000 });
    expect(run.accepted).toBe(2_000);
    expect(run.refused / (run.accepted + run.refused)).toBeLessThan(0.05);
    expect(run.accepted / run.seconds / allowedRps).toBeGreaterThanOrEqual(0.9);
    expect(run.limiter.state.learned?.rps).toBeGreaterThan(7.5);
    expect(run.limiter.state.learned?.rps).toBeLessThan(8.5);
  });

  it("does as well against a fixed window that started before the client", async () => {
    const perMinute = 480;
    let windowIndex = -1;
    let used = 0;
    // The service's minutes begin 30 s before the client's first request.
    const throttle: Throttle = (now) => {
      const shifted = now + 30_000;
      const index = Math.floor(shifted / 60_000);
      if (index !== windowIndex) {
        windowIndex = index;
        used = 0;
      }
      if (used < perMinute) {
        used += 1;
        return undefined;
      }
      return Math.max(1, Math.ceil(((index + 1) * 60_000 - shifted) / 1000));
    };
    const run = await simulateRun({ throttle, requests: 2_000 });
    expect(run.refused / (run.accepted + run.refused)).toBeLessThan(0.05);
    expect(run.accepted / run.seconds / allowedRps).toBeGreaterThanOrEqual(0.9);
  });
});
