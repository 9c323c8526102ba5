// Per-key throttling with sliding windows (a log of accepted request times), which gives an exact
// "available in N seconds": the time until the oldest request that counts falls out of its window.

import type { FaultOptions } from "./types.js";

export class SlidingWindowLimiter {
  private readonly windows: readonly { limit: number; ms: number }[];
  private readonly longestMs: number;
  private readonly history = new Map<string, number[]>();

  constructor({ perMinute, perHour }: NonNullable<FaultOptions["rateLimit"]>) {
    const windows = [
      ...(perMinute === undefined ? [] : [{ limit: perMinute, ms: 60_000 }]),
      ...(perHour === undefined ? [] : [{ limit: perHour, ms: 3_600_000 }]),
    ];
    this.windows = windows;
    // bounded-spread: at most the two windows above.
    this.longestMs = Math.max(0, ...windows.map((window) => window.ms));
  }

  /**
   * Counts a request of `key` at `nowMs` if every window has room and returns undefined; otherwise
   * counts nothing (a refused request does not extend the wait) and returns the whole seconds to wait.
   */
  take(key: string, nowMs: number): number | undefined {
    if (this.windows.length === 0) return undefined;
    const times = (this.history.get(key) ?? []).filter((time) => time > nowMs - this.longestMs);
    let waitMs = 0;
    for (const window of this.windows) {
      const inWindow = times.filter((time) => time > nowMs - window.ms);
      if (inWindow.length < window.limit) continue;
      // This many must expire before one more fits; the last of them sets the wait.
      const mustExpire = inWindow.length - window.limit + 1;
      const freeingTime = inWindow[mustExpire - 1];
      if (freeingTime !== undefined) waitMs = Math.max(waitMs, freeingTime + window.ms - nowMs);
      else waitMs = Math.max(waitMs, window.ms); // a limit of 0 never frees up
    }
    if (waitMs > 0) {
      this.history.set(key, times);
      return Math.max(1, Math.ceil(waitMs / 1000));
    }
    times.push(nowMs);
    this.history.set(key, times);
    return undefined;
  }
}
