// The one gate every request passes, reads and writes alike: a bound on requests in flight, an
// optional requests-per-second limit (token bucket), and adaptation to throttling — after a 429
// everyone waits the server's time, and the rate is halved, then recovers additively (AIMD).

export interface RateLimiterOptions {
  /** Requests in flight at most. */
  concurrency: number;
  /** Requests per second at most; undefined means no client-side limit until the service throttles. */
  maxRps?: number | undefined;
  /** Requests that may start back to back, as seconds' worth of the current rate (at least 1 request). */
  burstSeconds?: number;
  /** The rate is never lowered below this. */
  minRps?: number;
  /** The rate is multiplied by this on throttling. */
  decreaseFactor?: number;
  /** Requests per second the rate regains per second without throttling. */
  increaseRpsPerSecond?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const RATE_LIMITER_DEFAULTS = {
  burstSeconds: 1,
  minRps: 0.5,
  decreaseFactor: 0.5,
  increaseRpsPerSecond: 0.5,
} as const satisfies Partial<RateLimiterOptions>;

/** Gives the slot back; calling it twice is harmless. */
export type Release = () => void;

export interface RateLimiterState {
  /** The rate in force now (Infinity: unlimited). */
  rps: number;
  /** Until when every request waits (epoch ms); in the past when not paused. */
  pausedUntil: number;
  inFlight: number;
  queued: number;
}

// How far back starts are counted to estimate the rate that drew a 429 when there is no limit.
const OBSERVATION_WINDOW_MS = 5_000;
// 429s of requests already in flight when the first one came belong to the same episode.
const MIN_DECREASE_INTERVAL_MS = 1_000;

interface Decrease {
  /** When recovery starts (the end of the server's wait). */
  at: number;
  rps: number;
  /** The rate at which recovery is complete and the decrease forgotten. */
  recoverTo: number;
}

export class RateLimiter {
  readonly #concurrency: number;
  readonly #ceilingRps: number;
  readonly #burstSeconds: number;
  readonly #minRps: number;
  readonly #decreaseFactor: number;
  readonly #increaseRpsPerSecond: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** Theoretical arrival time of the token bucket (GCRA form): reservations are made ahead of time. */
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Bumped on each throttling, so a request that reserved its start before it re-checks. */
  #pauseGeneration = 0;
  #decrease: Decrease | undefined;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;
  readonly #recentStarts: number[] = [];
  #firstStart: number | undefined;

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
    this.#decreaseFactor = options.decreaseFactor ?? RATE_LIMITER_DEFAULTS.decreaseFactor;
    this.#increaseRpsPerSecond = options.increaseRpsPerSecond ?? RATE_LIMITER_DEFAULTS.increaseRpsPerSecond;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Waits for a slot and for the rate to allow a start; the caller must call the returned release. */
  async acquire(): Promise<Release> {
    await this.#takeSlot();
    try {
      for (;;) {
        const generation = this.#pauseGeneration;
        const wait = this.#reserveStart();
        if (wait > 0) await this.#sleep(wait);
        // A 429 while we slept moved everyone's start; take a new place.
        if (generation === this.#pauseGeneration) break;
      }
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

  /** The service throttled a request and asks to wait `waitMs`: everyone waits, and the rate drops. */
  noteThrottled(waitMs: number): void {
    const now = this.#now();
    const resumeAt = now + Math.max(0, waitMs);
    // Only the first 429 of an episode lowers the rate: the others were sent before it arrived.
    if (now >= this.#pausedUntil && now - this.#lastDecreaseAt >= MIN_DECREASE_INTERVAL_MS) {
      const before = this.#rateAt(now);
      const drawnRate = Number.isFinite(before) ? before : this.#observedRps(now);
      const lowered = Math.max(this.#minRps, drawnRate * this.#decreaseFactor);
      const recoverTo = Number.isFinite(this.#ceilingRps) ? this.#ceilingRps : Math.max(drawnRate, lowered);
      this.#decrease = { at: resumeAt, rps: lowered, recoverTo };
      this.#lastDecreaseAt = now;
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
    };
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
    const decrease = this.#decrease;
    if (!decrease) return this.#ceilingRps;
    const regained = (this.#increaseRpsPerSecond * Math.max(0, time - decrease.at)) / 1000;
    const rate = decrease.rps + regained;
    if (rate >= decrease.recoverTo) {
      this.#decrease = undefined;
      return this.#ceilingRps;
    }
    return Math.min(rate, this.#ceilingRps);
  }

  #observedRps(now: number): number {
    const since = now - OBSERVATION_WINDOW_MS;
    const count = this.#recentStarts.filter((start) => start >= since).length;
    const running = this.#firstStart === undefined ? 0 : now - this.#firstStart;
    const spanMs = Math.min(OBSERVATION_WINDOW_MS, Math.max(1_000, running));
    return Math.max(this.#minRps, (count * 1000) / spanMs);
  }

  #recordStart(now: number): void {
    this.#firstStart ??= now;
    this.#recentStarts.push(now);
    const since = now - OBSERVATION_WINDOW_MS;
    while (this.#recentStarts.length > 0 && (this.#recentStarts[0] ?? now) < since)
      this.#recentStarts.shift();
  }

  #takeSlot(): Promise<void> {
    if (this.#inFlight < this.#concurrency) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #releaseSlot(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter, so the count does not change.
    if (next) next();
    else this.#inFlight -= 1;
  }
}
