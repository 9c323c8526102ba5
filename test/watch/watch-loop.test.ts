// When cycles run: never two at once, a slow one delays the next, SIGHUP starts one now, and so does
// an early check between cycles (a changed manifest that has settled).

import { describe, expect, it } from "vitest";
import { WatchLoop } from "../../src/watch/watch-loop.js";
import { waitFor } from "../support/wait-for.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.concurrent("WatchLoop", () => {
  it("never overlaps cycles: one longer than the interval delays the next, none stack up", async () => {
    const stop = new AbortController();
    let running = 0;
    let most = 0;
    const spans: [number, number][] = [];
    const loop = new WatchLoop({
      intervalMs: 20,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        running += 1;
        most = Math.max(most, running);
        const started = performance.now();
        await sleep(60);
        spans.push([started, performance.now()]);
        running -= 1;
        if (spans.length === 4) stop.abort();
      },
    });
    await loop.run();
    expect(most).toBe(1);
    expect(loop.cycles).toBe(4);
    for (let index = 1; index < spans.length; index++) {
      expect(spans[index]?.[0]).toBeGreaterThanOrEqual(spans[index - 1]?.[1] ?? Number.POSITIVE_INFINITY);
    }
  });

  it("starts a cycle at once on trigger, after the one running when it comes during a cycle", async () => {
    const stop = new AbortController();
    const starts: number[] = [];
    const loop = new WatchLoop({
      intervalMs: 3_600_000,
      jitterShare: 0.1,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        starts.push(performance.now());
        if (starts.length === 1) {
          loop.trigger();
          await sleep(30);
        }
        if (starts.length === 3) stop.abort();
      },
    });
    const running = loop.run();
    await waitFor(() => starts.length === 2, "the triggered cycle");
    // The interval is an hour: nothing else starts a cycle.
    await sleep(50);
    expect(starts).toHaveLength(2);
    loop.trigger();
    await running;
    expect(starts).toHaveLength(3);
  });

  it("spreads the interval by the jitter, either way", () => {
    const values = [0, 0.5, 1];
    const loop = new WatchLoop({
      intervalMs: 1000,
      jitterShare: 0.1,
      once: true,
      stop: new AbortController().signal,
      cycle: async () => undefined,
      random: () => values.shift() ?? 0.5,
    });
    expect([loop.nextDelayMs(), loop.nextDelayMs(), loop.nextDelayMs()]).toEqual([900, 1000, 1100]);
  });
});

describe("WatchLoop's early checks", () => {
  it("checks between cycles when asked, and starts a cycle as soon as a check says so", async () => {
    const stop = new AbortController();
    const starts: number[] = [];
    let checks = 0;
    let dueAt: number | undefined;
    const loop = new WatchLoop({
      intervalMs: 3_600_000,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      early: {
        nextAt: () => dueAt,
        check: async () => {
          checks += 1;
          dueAt = performance.now() + 10;
          // The third check says a cycle is due; after it, nothing asks for a check.
          if (checks < 3) return false;
          dueAt = undefined;
          return true;
        },
      },
      cycle: async () => {
        starts.push(performance.now());
        if (starts.length === 1) dueAt = performance.now() + 10;
        if (starts.length === 2) stop.abort();
      },
    });
    await loop.run();
    expect(starts).toHaveLength(2);
    expect(checks).toBe(3);
  });

  it("leaves the interval alone when no check is asked for, and stops waiting on stop", async () => {
    const stop = new AbortController();
    let checks = 0;
    const loop = new WatchLoop({
      intervalMs: 3_600_000,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      early: {
        nextAt: () => undefined,
        check: async () => {
          checks += 1;
          return true;
        },
      },
      cycle: async () => undefined,
    });
    const running = loop.run();
    await sleep(50);
    stop.abort();
    await running;
    expect([loop.cycles, checks]).toEqual([1, 0]);
  });
});
