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
  timeScale?: number;
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
  readonly #slots: SlotSemaphore;
  readonly #ceilingRps: number;
  readonly #burstSeconds: number;
  readonly #minRps: number;
  readonly #decreaseFactor: number;
  /** Requests per second regained per ms. */
  readonly #increasePerMs: number;
  readonly #observationWindowMs: number;
  readonly #minDecreaseIntervalMs: number;
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
    this.#slots = new SlotSemaphore(options.concurrency);
    if (options.maxRps !== undefined && !(options.maxRps > 0))
      throw new RangeError("maxRps must be positive");
    const scale = options.timeScale ?? 1;
    if (!(scale > 0)) throw new RangeError("timeScale must be positive");
    this.#ceilingRps = options.maxRps ?? Number.POSITIVE_INFINITY;
    this.#burstSeconds = BURST_SECONDS * scale;
    this.#minRps = MIN_RPS / scale;
    this.#decreaseFactor = options.decreaseFactor ?? RATE_LIMITER_DEFAULTS.decreaseFactor;
    const increase = options.increaseRpsPerSecond ?? RATE_LIMITER_DEFAULTS.increaseRpsPerSecond;
    this.#increasePerMs = increase / (scale * scale) / 1000;
    this.#observationWindowMs = OBSERVATION_WINDOW_MS * scale;
    this.#minDecreaseIntervalMs = MIN_DECREASE_INTERVAL_MS * scale;
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
    await this.#slots.take(signal, ahead);
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
      this.#slots.release();
      throw error;
    }
    this.#recordStart(this.#now());
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#slots.release();
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
    const newEpisode = now >= this.#pausedUntil && now - this.#lastDecreaseAt >= this.#minDecreaseIntervalMs;
    if (this.#decreaseFactor < 1 && newEpisode) {
      const before = this.#rateAt(now);
      const drawnRate = Number.isFinite(before) ? before : this.#observedRps(now);
      const lowered = Math.max(this.#minRps, drawnRate * this.#decreaseFactor);
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
      inFlight: this.#slots.inFlight,
      queued: this.#slots.queued,
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
    const burst = Math.max(1, Math.floor(rate * this.#burstSeconds));
    return ((burst - 1) * 1000) / rate;
  }

  #recordStart(now: number): void {
    this.#firstStart ??= now;
    this.#starts.push(now);
    while ((this.#starts[0] ?? now) < now - this.#observationWindowMs) this.#starts.shift();
  }

  /** The rate of starts over the observation window (or since the first start, if shorter). */
  #observedRps(now: number): number {
    const windowMs = this.#observationWindowMs;
    const count = this.#starts.filter((start) => start >= now - windowMs).length;
    const running = this.#firstStart === undefined ? 0 : now - this.#firstStart;
    const spanMs = Math.min(windowMs, Math.max(windowMs / 5, running));
    return Math.max(this.#minRps, (count * 1000) / spanMs);
  }
}

// A bound on requests in flight: a request takes a slot before it starts and gives it back when
// done; waiters are served in order, and one whose signal aborts leaves the queue.
class SlotSemaphore {
  readonly #slots: number;
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** How many waiters at the front of the queue went ahead. */
  #aheadWaiting = 0;

  constructor(slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError("concurrency must be a positive integer");
    this.#slots = slots;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves once a slot is taken; rejects with the signal's reason if it aborts first. `ahead`
   * waits before every other waiter (after those that also went ahead).
   */
  take(signal: AbortSignal | undefined, ahead: boolean): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#inFlight < this.#slots) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(take);
        if (index < 0) return;
        this.#waiting.splice(index, 1);
        if (index < this.#aheadWaiting) this.#aheadWaiting -= 1;
        reject(signal?.reason);
      };
      const take = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      if (ahead) this.#waiting.splice(this.#aheadWaiting++, 0, take);
      else this.#waiting.push(take);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  release(): void {
    const next = this.#waiting.shift();
    if (this.#aheadWaiting > 0) this.#aheadWaiting -= 1;
    // The slot passes straight to the next waiter, so the count does not change.
    if (next) next();
    else this.#inFlight -= 1;
  }
}
