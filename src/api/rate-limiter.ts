// The one limiter every request passes, reads and writes alike (and each webhook's queue, with
// one of its own): a bound on requests in flight, an optional requests-per-second ceiling, and
// after a 429 a pause for everyone and a rate cut by a factor that then recovers (AIMD).

import { realSleep, type Sleep, sleepUnlessAborted } from "../abortable-sleep.js";

export interface RateLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests per second at most; undefined means no client-side limit until the service throttles. */
  maxRps?: number | undefined;
  /** On a 429 the rate is multiplied by this; 1 never slows down at all (the pauses remain). */
  decreaseFactor?: number;
  /** After a 429's pause: requests per second regained per second. */
  increaseRpsPerSecond?: number;
  /**
   * Multiplies the limiter's own durations (burst, observation window, the interval between
   * decreases) and divides its rates by it, as the client's `timeScale` does for tests.
   */
  timeScale?: number | undefined;
  now?: () => number;
  sleep?: Sleep;
}

const RATE_LIMITER_DEFAULTS = {
  decreaseFactor: 0.5,
  increaseRpsPerSecond: 0.5,
} as const satisfies Partial<RateLimiterOptions>;

// Requests that may start back to back, as seconds' worth of the current rate (at least 1 request).
const BURST_SECONDS = 1;
// The rate is never lowered below this (requests per second).
const MIN_RPS = 0.5;
// How far back starts are counted to estimate the rate that drew a 429 when there is no limit.
const OBSERVATION_WINDOW_MS = 5_000;
// 429s of requests already in flight when the first one came belong to the same episode.
const MIN_DECREASE_INTERVAL_MS = 1_000;

/** After a 429: the rate from `from` on is `rps` plus the recovery, until it reaches `recoverTo`. */
interface Recovery {
  from: number;
  rps: number;
  recoverTo: number;
}

export class RateLimiter {
  readonly #concurrency: number;
  #inFlight = 0;
  /** Requests waiting for a slot: those that go ahead, then the others, each in the order they came. */
  readonly #waiting: [ahead: Array<() => void>, others: Array<() => void>] = [[], []];
  readonly #ceilingRps: number;
  /** Multiplies the limiter's own durations and divides its rates (see RateLimiterOptions). */
  readonly #scale: number;
  readonly #decreaseFactor: number;
  /** Requests per second regained per ms. */
  readonly #increasePerMs: number;
  readonly #now: () => number;
  readonly #sleep: Sleep;
  /** Theoretical arrival time of the token bucket (GCRA form: starts are reserved ahead of time). */
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Bumped on each 429, so a request that reserved its start before it re-checks. */
  #pauseGeneration = 0;
  #recovery: Recovery | undefined;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  /** Start times within the observation window, oldest first. */
  readonly #starts: number[] = [];
  #firstStart: number | undefined;

  constructor(options: RateLimiterOptions) {
    const { concurrency } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError("concurrency must be a positive integer");
    this.#concurrency = concurrency;
    if (options.maxRps !== undefined && !(options.maxRps > 0))
      throw new RangeError("maxRps must be positive");
    const scale = options.timeScale ?? 1;
    if (!(scale > 0)) throw new RangeError("timeScale must be positive");
    this.#scale = scale;
    this.#ceilingRps = options.maxRps ?? Number.POSITIVE_INFINITY;
    this.#decreaseFactor = options.decreaseFactor ?? RATE_LIMITER_DEFAULTS.decreaseFactor;
    const increase = options.increaseRpsPerSecond ?? RATE_LIMITER_DEFAULTS.increaseRpsPerSecond;
    this.#increasePerMs = increase / (scale * scale) / 1000;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
  }

  /**
   * Waits for a slot and for the rate to allow a start; the caller must call the returned release
   * (twice is harmless). Once `signal` aborts, a request still waiting gives up its place and
   * rejects with the signal's reason: it never starts. `ahead` goes ahead of the client's own
   * pacing and of the requests queued for a slot (a create's settle re-read and its resend), never
   * ahead of a pause the service asked for.
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
    this.#recordStart(this.#now());
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#releaseSlot();
    };
  }

  /**
   * The service refused a request (429) and asks to wait `waitMs`: everyone waits, and the first
   * 429 of an episode cuts the rate by `decreaseFactor` (from the rate observed when none was in
   * force); it then grows back linearly to where it was.
   */
  noteThrottled(waitMs: number): void {
    const now = this.#now();
    const resumeAt = now + Math.max(0, waitMs);
    // The refused request did not count against the service's limit.
    this.#starts.pop();
    // Only the first 429 of an episode lowers the rate: the others were sent before it arrived.
    const newEpisode =
      now >= this.#pausedUntil && now - this.#lastDecreaseAt >= MIN_DECREASE_INTERVAL_MS * this.#scale;
    if (this.#decreaseFactor < 1 && newEpisode) {
      const before = this.#rateAt(now);
      const drawnRate = Number.isFinite(before) ? before : this.#observedRps(now);
      const lowered = Math.max(MIN_RPS / this.#scale, drawnRate * this.#decreaseFactor);
      const recoverTo = Number.isFinite(this.#ceilingRps) ? this.#ceilingRps : Math.max(drawnRate, lowered);
      this.#recovery = { from: resumeAt, rps: lowered, recoverTo };
      this.#lastDecreaseAt = now;
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, resumeAt);
    this.#pauseGeneration += 1;
    // Everyone starts again after the pause with no burst.
    this.#tat = Math.max(this.#tat, this.#pausedUntil + this.#burstToleranceMs(this.#rateAt(resumeAt)));
  }

  /**
   * The rate in force now (Infinity: unlimited); until when every request waits (epoch ms, in the
   * past when not paused); requests in flight and queued.
   */
  get state(): { rps: number; pausedUntil: number; inFlight: number; queued: number } {
    return {
      rps: this.#rateAt(this.#now()),
      pausedUntil: this.#pausedUntil,
      inFlight: this.#inFlight,
      queued: this.#waiting[0].length + this.#waiting[1].length,
    };
  }

  /**
   * Reserves the next start allowed by pause and rate; returns how long to wait for it. A start
   * `ahead` goes as soon as the service's pause allows, whatever the client's own rate, but still
   * counts against that rate, so those queued behind move back by one interval.
   */
  #reserveStart(now: number, ahead: boolean): number {
    const earliest = Math.max(now, this.#pausedUntil);
    const rate = this.#rateAt(earliest);
    if (!Number.isFinite(rate)) return earliest - now;
    const interval = 1000 / rate;
    const tat = Math.max(this.#tat, earliest);
    this.#tat = tat + interval;
    if (ahead) return earliest - now;
    return Math.max(earliest, tat - this.#burstToleranceMs(rate)) - now;
  }

  /** The rate in force at `time` (Infinity: unlimited); a recovery that is complete ends. */
  #rateAt(time: number): number {
    const recovery = this.#recovery;
    if (!recovery) return this.#ceilingRps;
    const rate = recovery.rps + this.#increasePerMs * Math.max(0, time - recovery.from);
    if (rate >= recovery.recoverTo) {
      this.#recovery = undefined;
      return this.#ceilingRps;
    }
    return Math.min(rate, this.#ceilingRps);
  }

  #burstToleranceMs(rate: number): number {
    if (!Number.isFinite(rate)) return 0;
    const burst = Math.max(1, Math.floor(rate * BURST_SECONDS * this.#scale));
    return ((burst - 1) * 1000) / rate;
  }

  #recordStart(now: number): void {
    this.#firstStart ??= now;
    this.#starts.push(now);
    while ((this.#starts[0] ?? now) < now - OBSERVATION_WINDOW_MS * this.#scale) this.#starts.shift();
  }

  /** The rate of starts over the observation window (or since the first start, if shorter). */
  #observedRps(now: number): number {
    const windowMs = OBSERVATION_WINDOW_MS * this.#scale;
    const count = this.#starts.filter((start) => start >= now - windowMs).length;
    const running = this.#firstStart === undefined ? 0 : now - this.#firstStart;
    const spanMs = Math.min(windowMs, Math.max(windowMs / 5, running));
    return Math.max(MIN_RPS / this.#scale, (count * 1000) / spanMs);
  }

  /**
   * Resolves once a slot is taken (waiters are served in order, those `ahead` before every other);
   * rejects with the signal's reason, leaving the queue, if it aborts first.
   */
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
