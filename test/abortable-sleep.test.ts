// Timers of any length: a bake of 30 days or a watch interval of a month waits that long. A Node
// timer past 2^31 - 1 ms fires at once (TimeoutOverflowWarning), which skipped a rollout's bake and
// ran watch cycles back to back; longer waits are chained timers, and an abort still ends them.

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_MS, realSleep, setLongTimeout } from "../src/abortable-sleep.js";
import { WatchLoop } from "../src/watch/watch-loop.js";

const DAY_MS = 24 * 60 * 60 * 1000;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a timer longer than one Node timer holds", () => {
  it("setLongTimeout fires once its whole time has passed, not before", () => {
    const fired = vi.fn();
    setLongTimeout(fired, 30 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY_MS - MAX_TIMER_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("setLongTimeout's cancel stops it in any of its links", () => {
    const fired = vi.fn();
    const cancel = setLongTimeout(fired, 3 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    cancel();
    vi.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(fired).not.toHaveBeenCalled();
  });

  it("realSleep of 30 days resolves after 30 days, and an abort ends it at once with the reason", async () => {
    let done = false;
    const sleeping = realSleep(30 * DAY_MS).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(29 * DAY_MS);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(DAY_MS);
    await sleeping;
    expect(done).toBe(true);

    const controller = new AbortController();
    const aborted = realSleep(30 * DAY_MS, controller.signal);
    controller.abort(new Error("stopped"));
    await expect(aborted).rejects.toThrow("stopped");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a watch loop with an interval of 30 days runs its second cycle 30 days after the first", async () => {
    const cycles: number[] = [];
    const stop = new AbortController();
    const loop = new WatchLoop({
      intervalMs: 30 * DAY_MS,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        cycles.push(Date.now());
        if (cycles.length === 2) stop.abort();
      },
    });
    const running = loop.run();
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1000);
    expect(cycles).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(30 * DAY_MS);
    await running;
    expect(cycles).toHaveLength(2);
    expect((cycles[1] ?? 0) - (cycles[0] ?? 0)).toBe(30 * DAY_MS);
  });
});
