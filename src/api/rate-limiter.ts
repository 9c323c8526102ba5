// The one gate every request passes, reads and writes alike: a bound on requests in flight, an
// optional requests-per-second ceiling, and adaptation to throttling. After a 429 everyone waits
// the server's time; when the server says how long, the limiter also learns its limit (requests
// accepted over the window that wait implies) and paces just under it, then slowly probes upward.

import { realSleep, type Sleep, sleepUnlessAborted } from "./abortable-sleep.js";

export interface RateLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests per second at most; undefined means no client-side limit until the service throttles. */
  maxRps?: number | undefined;
  /** Requests that may start back to back, as seconds' worth of the current rate (at least 1 request). */
  burstSeconds?: number;
  /** The rate is never lowered below this. */
  minRps?: number;
  /** Share of a learned limit to pace at: under 1 leaves room for clock and network jitter. */
  targetShare?: number;
  /**
   * The rate grows by this share per learned window without a 429, so that a limit that was
   * raised (or a 429 that was not about the rate) is found again.
   */
  recoveryShare?: number;
  /**
   * When the service does not say how long to wait: the rate is multiplied by this (AIMD).
   * 1 never slows down at all, whatever the service says (the pauses remain).
   */
  decreaseFactor?: number;
  /** When the service does not say how long to wait: requests per second regained per second. */
  increaseRpsPerSecond?: number;
  now?: () => number;
  sleep?: Sleep;
}

export const RATE_LIMITER_DEFAULTS = {
  burstSeconds: 1,
  minRps: 0.5,
  targetShare: 0.95,
  recoveryShare: 0.1,
  decreaseFactor: 0.5,
  increaseRpsPerSecond: 0.5,
} as const satisfies Partial<RateLimiterOptions>;

/** Gives the slot back; calling it twice is harmless. */
export type Release = () => void;

/** The service's limit as learned from its 429s. */
export interface LearnedLimit {
  /** Requests per second the service accepts over its window. */
  rps: number;
  /** The length of the service's window (ms), as implied by its first stated wait. */
  windowMs: number;
}

export interface RateLimiterState {
  /** The rate in force now (Infinity: unlimited). */
  rps: number;
  /** Until when every request waits (epoch ms); in the past when not paused. */
  pausedUntil: number;
  inFlight: number;
  queued: number;
  learned: LearnedLimit | undefined;
}

/**
 * How the rate evolves after a throttling: from `rps` at `from`, growing by `growthPerMs` requests
 * per second each ms (linear), or by the factor `growthPerWindow` each `windowMs` (geometric).
 */
interface RateSchedule {
  from: number;
  rps: number;
  growthPerMs: number;
  growthPerWindow: number;
  windowMs: number;
  /** Reaching this rate ends the schedule (back to the ceiling); undefined: it never ends by itself. */
  recoverTo: number | undefined;
}

// Starts are counted in buckets of this many ms, kept for an hour (the longest window worth
// learning: a longer wait than the client allows fails the request anyway).
const BUCKET_MS = 100;
const HISTORY_MS = 3_600_000;
// How far back starts are counted to estimate the rate that drew a 429 when there is no limit.
const OBSERVATION_WINDOW_MS = 5_000;
// 429s of requests already in flight when the first one came belong to the same episode.
const MIN_DECREASE_INTERVAL_MS = 1_000;
// A rate limit refuses a client that has sent its allowance; a 429 after only a few requests is a
// passing refusal (a fault, another client on the key) and teaches nothing about the rate.
const MIN_STARTS_TO_LEARN = 30;

export class RateLimiter {
  readonly #concurrency: number;
  readonly #ceilingRps: number;
  readonly #burstSeconds: number;
  readonly #minRps: number;
  readonly #targetShare: number;
  readonly #recoveryShare: number;
  readonly #decreaseFactor: number;
  readonly #increaseRpsPerSecond: number;
  readonly #now: () => number;
  readonly #sleep: Sleep;

  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** Theoretical arrival time of the token bucket (GCRA form): reservations are made ahead of time. */
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Bumped on each throttling, so a request that reserved its start before it re-checks. */
  #pauseGeneration = 0;
  #schedule: RateSchedule | undefined;
  #learned: LearnedLimit | undefined;
  /** The rate when the current throttling episode began. */
  #episodeRps = Number.POSITIVE_INFINITY;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  /** Starts the service counted (refused ones are taken out again), per bucket, oldest first. */
  readonly #bucketTimes: number[] = [];
  readonly #bucketCounts: number[] = [];

  constructor(options: RateLimiterOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError("concurrency must be a positive integer");
    }
    if (options.maxRps !== undefined && !(options.maxRps > 0))
      throw new RangeError("maxRps must be positive");
    this.#concurrency = options.concurrency;
    this.#ceilingRps = options.maxRps ?? Number.POSITIVE_INFINITY;
    this.#burstSeconds = options.burstSeconds ?? RATE_LIMITER_DEFAULTS.burstSeconds;
    this.#minRps = options.minRps ?? RATE_LIMITER_DEFAULTS.minRps;
    this.#targetShare = options.targetShare ?? RATE_LIMITER_DEFAULTS.targetShare;
    this.#recoveryShare = options.recoveryShare ?? RATE_LIMITER_DEFAULTS.recoveryShare;
    this.#decreaseFactor = options.decreaseFactor ?? RATE_LIMITER_DEFAULTS.decreaseFactor;
    this.#increaseRpsPerSecond = options.increaseRpsPerSecond ?? RATE_LIMITER_DEFAULTS.increaseRpsPerSecond;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
  }

  /**
   * Waits for a slot and for the rate to allow a start; the caller must call the returned release.
   * Once `signal` aborts, a request still waiting gives up its place and rejects with the signal's
   * reason: it never starts.
   */
  async acquire(signal?: AbortSignal): Promise<Release> {
    await this.#takeSlot(signal);
    try {
      for (;;) {
        signal?.throwIfAborted();
        const generation = this.#pauseGeneration;
        const wait = this.#reserveStart();
        if (wait > 0) await sleepUnlessAborted(this.#sleep, wait, signal);
        // A 429 while we slept moved everyone's start; take a new place.
        if (generation === this.#pauseGeneration) break;
      }
      signal?.throwIfAborted();
    } catch (error) {
      this.#releaseSlot();
      throw error;
    }
    this.#recordStart(this.#now());
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#releaseSlot();
    };
  }

  /** Runs `task` inside a slot. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await task();
    } finally {
      release();
    }
  }

  /**
   * The service refused a request (429) and asks to wait `waitMs`: everyone waits, and the rate
   * drops. `stated: false` means the wait is the client's own guess (no Retry-After, no detail):
   * then nothing can be learned and the rate is cut by `decreaseFactor` instead.
   */
  noteThrottled(waitMs: number, options: { stated?: boolean } = {}): void {
    const now = this.#now();
    const resumeAt = now + Math.max(0, waitMs);
    // The refused request did not count against the service's limit.
    this.#forgetOneStart();
    // A 429 after the pause is a new episode; those of requests in flight before belong to this one.
    if (now >= this.#pausedUntil) this.#episodeRps = this.#rateAt(now);
    if (this.#decreaseFactor < 1) {
      const learned = options.stated !== false && waitMs > 0 && this.#learnLimit(now, resumeAt);
      if (!learned) this.#decreaseBlindly(now, resumeAt);
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, resumeAt);
    this.#pauseGeneration += 1;
    // No burst right after the pause: restart the bucket empty at the resume time.
    this.#tat = Math.max(this.#tat, this.#pausedUntil + this.#burstToleranceMs(this.#rateAt(resumeAt)));
  }

  get state(): RateLimiterState {
    const now = this.#now();
    return {
      rps: this.#rateAt(now),
      pausedUntil: this.#pausedUntil,
      inFlight: this.#inFlight,
      queued: this.#waiting.length,
      learned: this.#learned && { ...this.#learned },
    };
  }

  /**
   * A service with a sliding window refuses at `now` because its window holds its limit, and
   * says a place frees at `resumeAt`, when the oldest request it counts leaves the window. Two
   * estimates of the limit follow, and the higher is taken (too high costs one more 429 and
   * refines the estimate; too low would cost throughput for good):
   * - since our first start: taking that for the oldest request counted, the window is
   *   `resumeAt - first` and the limit is every start since. Exact when the first 429 comes
   *   within one window (as it does when a client starts too fast); later it is the long-run
   *   rate accepted, which also holds for fixed windows and for any window length.
   * - over the window learned at the first 429: the starts since `resumeAt - window`. Exact for
   *   sliding windows, and unaffected by idle time long ago.
   * Every 429 of an episode refines the estimate: refused requests leave the count as they return.
   */
  #learnLimit(now: number, resumeAt: number): boolean {
    const first = this.#bucketTimes[0];
    if (first === undefined) return false;
    // Handled by the pause alone: neither learned from nor cut blindly.
    if (this.#learned === undefined && this.#startsSince(first) < MIN_STARTS_TO_LEARN) return true;
    const sinceFirstMs = resumeAt - first;
    let rps = (this.#startsSince(first) * 1000) / sinceFirstMs;
    let windowMs = this.#learned?.windowMs;
    // A wait longer than the learned window belongs to another, longer window (an hourly limit).
    if (windowMs !== undefined && resumeAt - windowMs <= now) {
      const windowStart = Math.floor((resumeAt - windowMs) / BUCKET_MS) * BUCKET_MS;
      rps = Math.max(rps, (this.#startsSince(windowStart) * 1000) / windowMs);
    } else {
      windowMs = sinceFirstMs;
    }
    if (!(rps > 0)) return false;
    this.#learned = { rps, windowMs };
    // One episode lowers a rate already learned by `decreaseFactor` at most: 429s that are not
    // about the rate (a fault, another client on the key) must not spiral it down, since each
    // pause also lowers the rate measured next.
    const floor = Number.isFinite(this.#episodeRps) ? this.#episodeRps * this.#decreaseFactor : 0;
    this.#schedule = {
      from: Math.max(resumeAt, this.#pausedUntil),
      rps: Math.min(this.#ceilingRps, Math.max(this.#minRps, floor, rps * this.#targetShare)),
      growthPerMs: 0,
      growthPerWindow: 1 + this.#recoveryShare,
      windowMs,
      recoverTo: Number.isFinite(this.#ceilingRps) ? this.#ceilingRps : undefined,
    };
    return true;
  }

  /** AIMD for 429s without a stated wait: halve (by default) once per episode, recover linearly. */
  #decreaseBlindly(now: number, resumeAt: number): void {
    // Only the first 429 of an episode lowers the rate: the others were sent before it arrived.
    if (now < this.#pausedUntil || now - this.#lastDecreaseAt < MIN_DECREASE_INTERVAL_MS) return;
    const before = this.#rateAt(now);
    const drawnRate = Number.isFinite(before) ? before : this.#observedRps(now);
    const lowered = Math.max(this.#minRps, drawnRate * this.#decreaseFactor);
    this.#schedule = {
      from: resumeAt,
      rps: lowered,
      growthPerMs: this.#increaseRpsPerSecond / 1000,
      growthPerWindow: 1,
      windowMs: 1,
      recoverTo: Number.isFinite(this.#ceilingRps) ? this.#ceilingRps : Math.max(drawnRate, lowered),
    };
    this.#lastDecreaseAt = now;
  }

  /** Reserves the next start allowed by pause and rate; returns how long to wait for it. */
  #reserveStart(): number {
    const now = this.#now();
    const earliest = Math.max(now, this.#pausedUntil);
    const rate = this.#rateAt(earliest);
    if (!Number.isFinite(rate)) return earliest - now;
    const interval = 1000 / rate;
    const tat = Math.max(this.#tat, earliest);
    const start = Math.max(earliest, tat - this.#burstToleranceMs(rate));
    this.#tat = tat + interval;
    return start - now;
  }

  #burstToleranceMs(rate: number): number {
    if (!Number.isFinite(rate)) return 0;
    const burst = Math.max(1, Math.floor(rate * this.#burstSeconds));
    return ((burst - 1) * 1000) / rate;
  }

  #rateAt(time: number): number {
    const schedule = this.#schedule;
    if (!schedule) return this.#ceilingRps;
    const elapsed = Math.max(0, time - schedule.from);
    const rate =
      schedule.rps * schedule.growthPerWindow ** (elapsed / schedule.windowMs) +
      schedule.growthPerMs * elapsed;
    if (schedule.recoverTo !== undefined && rate >= schedule.recoverTo) {
      this.#schedule = undefined;
      return this.#ceilingRps;
    }
    return Math.min(rate, this.#ceilingRps);
  }

  #observedRps(now: number): number {
    const count = this.#startsSince(now - OBSERVATION_WINDOW_MS);
    const first = this.#bucketTimes[0];
    const running = first === undefined ? 0 : now - first;
    const spanMs = Math.min(OBSERVATION_WINDOW_MS, Math.max(1_000, running));
    return Math.max(this.#minRps, (count * 1000) / spanMs);
  }

  /** Starts recorded in buckets that begin at or after `time`. */
  #startsSince(time: number): number {
    let count = 0;
    for (let index = this.#bucketTimes.length - 1; index >= 0; index -= 1) {
      if ((this.#bucketTimes[index] ?? 0) < time) break;
      count += this.#bucketCounts[index] ?? 0;
    }
    return count;
  }

  #recordStart(now: number): void {
    const bucket = Math.floor(now / BUCKET_MS) * BUCKET_MS;
    const last = this.#bucketTimes.length - 1;
    if (last >= 0 && this.#bucketTimes[last] === bucket) {
      this.#bucketCounts[last] = (this.#bucketCounts[last] ?? 0) + 1;
    } else {
      this.#bucketTimes.push(bucket);
      this.#bucketCounts.push(1);
    }
    let expired = 0;
    while (expired < this.#bucketTimes.length && (this.#bucketTimes[expired] ?? now) < now - HISTORY_MS)
      expired += 1;
    if (expired > 0) {
      this.#bucketTimes.splice(0, expired);
      this.#bucketCounts.splice(0, expired);
    }
  }

  /** Takes one start out of the newest bucket that has one (the refused request started recently). */
  #forgetOneStart(): void {
    for (let index = this.#bucketCounts.length - 1; index >= 0; index -= 1) {
      const count = this.#bucketCounts[index] ?? 0;
      if (count > 0) {
        this.#bucketCounts[index] = count - 1;
        return;
      }
    }
  }

  #takeSlot(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#inFlight < this.#concurrency) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(take);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal?.reason);
      };
      const take = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#waiting.push(take);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #releaseSlot(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter, so the count does not change.
    if (next) next();
    else this.#inFlight -= 1;
  }
}
