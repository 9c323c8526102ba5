// The shared limiter on a fake clock: concurrency, rate, the server's wait, and whole runs against
// simulated throttling servers.

import { describe, expect, it } from "vitest";
import { RateLimiter, type RateLimiterOptions } from "../../src/api/rate-limiter.js";
import { SlidingWindowLimiter } from "../../src/emulator/faults.js";

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

  it("lets a request go ahead of those queued for a slot, in the order such requests came", async () => {
    const limiter = new RateLimiter({ concurrency: 1 });
    const order: string[] = [];
    const held = await limiter.acquire();
    const take = (name: string, ahead: boolean, signal?: AbortSignal) =>
      limiter.acquire(signal, { ahead }).then(
        (release) => {
          order.push(name);
          release();
        },
        () => order.push(`${name} gave up`),
      );
    const abandoned = new AbortController();
    const all = [
      take("queued 1", false),
      take("queued 2", false),
      take("ahead 1", true),
      take("ahead, aborted", true, abandoned.signal),
      take("ahead 2", true),
    ];
    abandoned.abort();
    all.push(take("ahead 3", true));
    held();
    await Promise.all(all);
    expect(order).toEqual([
      "ahead, aborted gave up",
      "ahead 1",
      "ahead 2",
      "ahead 3",
      "queued 1",
      "queued 2",
    ]);
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

  it("before any request, still makes everyone wait, and starts them again without a burst", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, maxRps: 8, ...clock });
    limiter.noteThrottled(3_000);
    limiter.noteThrottled(3_000);
    expect(limiter.state.pausedUntil).toBe(3_000);
    const starts: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      (await limiter.acquire())();
      starts.push(clock.now());
    }
    expect(starts).toEqual([3_000, 3_125, 3_250]);
    expect(limiter.state.rps).toBe(8);
  });

  it("waits as told but never slows down", async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ concurrency: 10, ...clock });
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
