// The limiter every request passes (each webhook's queue has its own): requests in flight, an
// optional requests-per-second ceiling, and after a 429 a pause for everyone.

import { realSleep, type Sleep, sleepUnlessAborted } from "../abortable-sleep.js";

export interface RateLimiterOptions {
  concurrency: number;
  /** Undefined: no client-side limit until the service throttles. */
  maxRps?: number | undefined;
  /** Scales the burst, as the client's `timeScale` does for tests. */
  timeScale?: number | undefined;
  now?: () => number;
  sleep?: Sleep;
}

// Requests that may start back to back, as seconds' worth of the rate (at least 1 request).
const BURST_SECONDS = 1;

export class RateLimiter {
  readonly #concurrency: number;
  #inFlight = 0;
  readonly #waiting: [ahead: Array<() => void>, others: Array<() => void>] = [[], []];
  /** Infinity: unlimited. */
  readonly #rps: number;
  /** How far starts may run ahead of the rate: one second's worth of it (scaled), less one request. */
  readonly #burstToleranceMs: number;
  readonly #now: () => number;
  readonly #sleep: Sleep;
  /** Theoretical arrival time of the token bucket (GCRA form: starts are reserved ahead of time). */
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Bumped on each 429, so a request that reserved its start before it re-checks. */
  #pauseGeneration = 0;

  constructor(options: RateLimiterOptions) {
    const { concurrency } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError("concurrency must be a positive integer");
    this.#concurrency = concurrency;
    if (options.maxRps !== undefined && !(options.maxRps > 0))
      throw new RangeError("maxRps must be positive");
    const scale = options.timeScale ?? 1;
    if (!(scale > 0)) throw new RangeError("timeScale must be positive");
    this.#rps = options.maxRps ?? Number.POSITIVE_INFINITY;
    const burst = Math.max(1, Math.floor(this.#rps * BURST_SECONDS * scale));
    this.#burstToleranceMs = Number.isFinite(this.#rps) ? ((burst - 1) * 1000) / this.#rps : 0;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
  }

  /**
   * Waits for a slot and a start; the caller must call the returned release (twice is harmless).
   * `ahead` skips the client's own pacing and queue, never a pause the service asked for.
   */
  async acquire(signal?: AbortSignal, options: { ahead?: boolean | undefined } = {}): Promise<() => void> {
    const ahead = options.ahead === true;
    await this.#takeSlot(signal, ahead);
    try {
      for (;;) {
        signal?.throwIfAborted();
        const generation = this.#pauseGeneration;
        const wait = this.#reserveStart(this.#now(), ahead);
        if (wait > 0) await sleepUnlessAborted(this.#sleep, wait, signal);
        // A 429 while we slept moved everyone's start; take a new place.
        if (generation === this.#pauseGeneration) break;
      }
      signal?.throwIfAborted();
    } catch (error) {
      this.#releaseSlot();
      throw error;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#releaseSlot();
    };
  }

  /** After a 429: everyone waits `waitMs`. */
  noteThrottled(waitMs: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + Math.max(0, waitMs));
    this.#pauseGeneration += 1;
    // Everyone starts again after the pause with no burst.
    this.#tat = Math.max(this.#tat, this.#pausedUntil + this.#burstToleranceMs);
  }

  /** `pausedUntil` (epoch ms) is in the past when not paused. */
  get state(): { rps: number; pausedUntil: number; inFlight: number; queued: number } {
    return {
      rps: this.#rps,
      pausedUntil: this.#pausedUntil,
      inFlight: this.#inFlight,
      queued: this.#waiting[0].length + this.#waiting[1].length,
    };
  }

  /**
   * Returns how long to wait for the next start. One `ahead` still counts against the rate, so those
   * queued behind move back by one interval.
   */
  #reserveStart(now: number, ahead: boolean): number {
    const earliest = Math.max(now, this.#pausedUntil);
    if (!Number.isFinite(this.#rps)) return earliest - now;
    const tat = Math.max(this.#tat, earliest);
    this.#tat = tat + 1000 / this.#rps;
    if (ahead) return earliest - now;
    return Math.max(earliest, tat - this.#burstToleranceMs) - now;
  }

  /** Waiters are served in order, those `ahead` first; an abort rejects and leaves the queue. */
  #takeSlot(signal: AbortSignal | undefined, ahead: boolean): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#inFlight < this.#concurrency) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    const queue = this.#waiting[ahead ? 0 : 1];
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = queue.indexOf(take);
        if (index < 0) return;
        queue.splice(index, 1);
        reject(signal?.reason);
      };
      const take = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      queue.push(take);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #releaseSlot(): void {
    const next = this.#waiting[0].shift() ?? this.#waiting[1].shift();
    // The slot passes straight to the next waiter, so the count does not change.
    if (next) next();
    else this.#inFlight -= 1;
  }
}
