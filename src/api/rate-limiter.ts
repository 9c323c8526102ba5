// The one gate every request passes, reads and writes alike: a bound on requests in flight
// (slot-semaphore.ts), an optional requests-per-second ceiling and the pauses after a 429
// (rate-pacer.ts), and, when the service says how long to wait, its limit learned
// (limit-learner.ts) so that requests are paced just under it.

import { realSleep, type Sleep, sleepUnlessAborted } from "./abortable-sleep.js";
import { type LearnedLimit, LimitLearner } from "./limit-learner.js";
import { RatePacer } from "./rate-pacer.js";
import { SlotSemaphore } from "./slot-semaphore.js";
import { StartHistory } from "./start-history.js";

export type { LearnedLimit };

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
  /**
   * Learn the service's limit from 429s that say how long to wait (default true); false treats
   * them as those that do not (AIMD), to measure what learning buys.
   */
  learnLimits?: boolean;
  /**
   * Multiplies the limiter's own durations (burst, observation window, the interval between
   * decreases) and divides its rates by it, as the client's `timeScale` does for tests.
   */
  timeScale?: number;
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

export interface AcquireOptions {
  /**
   * Goes ahead of the client's own pacing and of the requests queued for a slot (a create's settle
   * re-read and its resend), never ahead of a pause the service asked for.
   */
  ahead?: boolean | undefined;
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

// How far back starts are counted to estimate the rate that drew a 429 when there is no limit.
const OBSERVATION_WINDOW_MS = 5_000;
// 429s of requests already in flight when the first one came belong to the same episode.
const MIN_DECREASE_INTERVAL_MS = 1_000;
// A gap between requests up to this long is the client's own pace, not idleness: only longer
// ones (a create settling, a pause between a watch's cycles) leave the learner's count of time.
const IDLE_GAP_MS = 1_000;

export class RateLimiter {
  readonly #slots: SlotSemaphore;
  readonly #pacer: RatePacer;
  readonly #learner: LimitLearner | undefined;
  readonly #history: StartHistory;
  readonly #minRps: number;
  readonly #decreaseFactor: number;
  readonly #now: () => number;
  readonly #sleep: Sleep;
  /** The rate when the current throttling episode began. */
  #episodeRps = Number.POSITIVE_INFINITY;
  readonly #observationWindowMs: number;
  readonly #idleGapMs: number;
  /** Requests holding or waiting for a slot: while there are none, the client is idle. */
  #active = 0;
  /** When the client last fell idle (undefined while busy, and before the first request). */
  #idleSince: number | undefined;
  /** Idle spans, oldest first, so the learner counts only the time the client was sending. */
  readonly #idle: Array<{ from: number; to: number }> = [];

  constructor(options: RateLimiterOptions) {
    this.#slots = new SlotSemaphore(options.concurrency);
    if (options.maxRps !== undefined && !(options.maxRps > 0))
      throw new RangeError("maxRps must be positive");
    const scale = options.timeScale ?? 1;
    if (!(scale > 0)) throw new RangeError("timeScale must be positive");
    const ceilingRps = options.maxRps ?? Number.POSITIVE_INFINITY;
    this.#minRps = (options.minRps ?? RATE_LIMITER_DEFAULTS.minRps) / scale;
    this.#decreaseFactor = options.decreaseFactor ?? RATE_LIMITER_DEFAULTS.decreaseFactor;
    this.#observationWindowMs = OBSERVATION_WINDOW_MS * scale;
    this.#idleGapMs = IDLE_GAP_MS * scale;
    this.#history = new StartHistory(scale);
    this.#pacer = new RatePacer({
      ceilingRps,
      burstSeconds: (options.burstSeconds ?? RATE_LIMITER_DEFAULTS.burstSeconds) * scale,
      minRps: this.#minRps,
      decreaseFactor: this.#decreaseFactor,
      increaseRpsPerSecond:
        (options.increaseRpsPerSecond ?? RATE_LIMITER_DEFAULTS.increaseRpsPerSecond) / (scale * scale),
      minDecreaseIntervalMs: MIN_DECREASE_INTERVAL_MS * scale,
    });
    this.#learner =
      options.learnLimits === false
        ? undefined
        : new LimitLearner({
            ceilingRps,
            minRps: this.#minRps,
            targetShare: options.targetShare ?? RATE_LIMITER_DEFAULTS.targetShare,
            recoveryShare: options.recoveryShare ?? RATE_LIMITER_DEFAULTS.recoveryShare,
            decreaseFactor: this.#decreaseFactor,
          });
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
  }

  /**
   * Waits for a slot and for the rate to allow a start; the caller must call the returned release.
   * Once `signal` aborts, a request still waiting gives up its place and rejects with the signal's
   * reason: it never starts.
   */
  async acquire(signal?: AbortSignal, options: AcquireOptions = {}): Promise<Release> {
    const ahead = options.ahead === true;
    this.#busy();
    try {
      await this.#slots.take(signal, ahead);
    } catch (error) {
      this.#calm();
      throw error;
    }
    try {
      for (;;) {
        signal?.throwIfAborted();
        const generation = this.#pacer.pauseGeneration;
        const now = this.#now();
        const wait = ahead ? this.#pacer.reserveStartAhead(now) : this.#pacer.reserveStart(now);
        if (wait > 0) await sleepUnlessAborted(this.#sleep, wait, signal);
        // A 429 while we slept moved everyone's start; take a new place.
        if (generation === this.#pacer.pauseGeneration) break;
      }
      signal?.throwIfAborted();
    } catch (error) {
      this.#slots.release();
      this.#calm();
      throw error;
    }
    this.#history.record(this.#now());
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#slots.release();
      this.#calm();
    };
  }

  /** A request starts waiting for a slot: the client is busy from now. */
  #busy(): void {
    this.#active += 1;
    if (this.#active !== 1 || this.#idleSince === undefined) return;
    const now = this.#now();
    if (now - this.#idleSince > this.#idleGapMs) this.#idle.push({ from: this.#idleSince, to: now });
    this.#idleSince = undefined;
    const horizon = now - this.#history.keptMs;
    while ((this.#idle[0]?.to ?? Number.POSITIVE_INFINITY) < horizon) this.#idle.shift();
  }

  /** A request gave its slot back (or gave up waiting): with none left, the client is idle. */
  #calm(): void {
    this.#active -= 1;
    if (this.#active === 0) this.#idleSince = this.#now();
  }

  /**
   * How long the client was idle between `from` and `to`: no request holding or waiting for a
   * slot for more than a second (scaled).
   */
  idleMsBetween(from: number, to: number): number {
    let idle = 0;
    const open = this.#idleSince;
    const spans =
      open === undefined || to - open <= this.#idleGapMs ? this.#idle : [...this.#idle, { from: open, to }];
    for (const span of spans) idle += Math.max(0, Math.min(span.to, to) - Math.max(span.from, from));
    return idle;
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
    this.#history.forgetOne();
    const pausedUntil = this.#pacer.pausedUntil;
    // A 429 after the pause is a new episode; those of requests in flight before belong to this one.
    if (now >= pausedUntil) this.#episodeRps = this.#pacer.rateAt(now);
    if (this.#decreaseFactor < 1) {
      const learned =
        options.stated !== false && waitMs > 0
          ? this.#learner?.learn(
              { now, resumeAt, episodeRps: this.#episodeRps, pausedUntil },
              this.#history,
              (from) => this.idleMsBetween(from, now),
            )
          : undefined;
      if (learned === undefined) this.#pacer.decreaseBlindly(now, resumeAt, () => this.#observedRps(now));
      else if (learned !== "pause only") this.#pacer.follow(learned);
    }
    this.#pacer.pauseUntil(resumeAt);
  }

  get state(): RateLimiterState {
    return {
      rps: this.#pacer.rateAt(this.#now()),
      pausedUntil: this.#pacer.pausedUntil,
      inFlight: this.#slots.inFlight,
      queued: this.#slots.queued,
      learned: this.#learner?.learned,
    };
  }

  #observedRps(now: number): number {
    const windowMs = this.#observationWindowMs;
    const count = this.#history.since(now - windowMs);
    const first = this.#history.first;
    const running = first === undefined ? 0 : now - first;
    const spanMs = Math.min(windowMs, Math.max(windowMs / 5, running));
    return Math.max(this.#minRps, (count * 1000) / spanMs);
  }
}
