// The one limiter every request passes, reads and writes alike (and each webhook's queue, with
// one of its own): a bound on requests in flight (SlotSemaphore), an optional requests-per-second
// ceiling and the pauses after a 429 (RatePacer), and, when the service says how long to wait, its
// limit learned (LimitLearner, from the StartHistory) so that requests are paced just under it.

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

// ---------------------------------------------------------------------------------------------
// A bound on requests in flight: a request takes a slot before it starts and gives it back when
// done; waiters are served in order, and one whose signal aborts leaves the queue.

class SlotSemaphore {
  readonly #slots: number;
  #inFlight = 0;
  readonly #waiting: Array<() => void> = [];
  /** The waiters that went ahead. */
  readonly #ahead = new WeakSet<() => void>();

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
  take(signal: AbortSignal | undefined, ahead = false): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#inFlight < this.#slots) {
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
      if (ahead) {
        this.#waiting.splice(this.#aheadWaiting(), 0, take);
        this.#ahead.add(take);
      } else this.#waiting.push(take);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** How many waiters at the front of the queue went ahead. */
  #aheadWaiting(): number {
    let index = 0;
    while (index < this.#waiting.length && this.#ahead.has(this.#waiting[index] as () => void)) index += 1;
    return index;
  }

  release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter, so the count does not change.
    if (next) next();
    else this.#inFlight -= 1;
  }
}

// ---------------------------------------------------------------------------------------------
// The starts the service counted, in buckets of 100 ms kept for an hour (the longest window worth
// learning: a longer wait than the client allows fails the request anyway). The pacer estimates
// the rate that drew a 429 from it, the learner the service's limit.

const BUCKET_MS = 100;
const HISTORY_MS = 3_600_000;

class StartHistory {
  readonly #bucketMs: number;
  /** How long starts are kept (ms). */
  readonly keptMs: number;

  /** `timeScale` shrinks the buckets and the time kept with the client's other durations. */
  constructor(timeScale = 1) {
    this.#bucketMs = Math.max(1, BUCKET_MS * timeScale);
    this.keptMs = HISTORY_MS * timeScale;
  }

  /** Starts per bucket (refused ones are taken out again), oldest first. */
  readonly #bucketTimes: number[] = [];
  readonly #bucketCounts: number[] = [];

  /** When the oldest bucket kept begins; undefined before the first start. */
  get first(): number | undefined {
    return this.#bucketTimes[0];
  }

  /** `time` rounded down to the start of its bucket. */
  bucketOf(time: number): number {
    return Math.floor(time / this.#bucketMs) * this.#bucketMs;
  }

  /** Starts recorded in buckets that begin at or after `time`. */
  since(time: number): number {
    let count = 0;
    for (let index = this.#bucketTimes.length - 1; index >= 0; index -= 1) {
      if ((this.#bucketTimes[index] ?? 0) < time) break;
      count += this.#bucketCounts[index] ?? 0;
    }
    return count;
  }

  record(now: number): void {
    const bucket = this.bucketOf(now);
    const last = this.#bucketTimes.length - 1;
    if (last >= 0 && this.#bucketTimes[last] === bucket) {
      this.#bucketCounts[last] = (this.#bucketCounts[last] ?? 0) + 1;
    } else {
      this.#bucketTimes.push(bucket);
      this.#bucketCounts.push(1);
    }
    let expired = 0;
    while (expired < this.#bucketTimes.length && (this.#bucketTimes[expired] ?? now) < now - this.keptMs)
      expired += 1;
    if (expired > 0) {
      this.#bucketTimes.splice(0, expired);
      this.#bucketCounts.splice(0, expired);
    }
  }

  /** Takes one start out of the newest bucket that has one (the refused request started recently). */
  forgetOne(): void {
    for (let index = this.#bucketCounts.length - 1; index >= 0; index -= 1) {
      const count = this.#bucketCounts[index] ?? 0;
      if (count > 0) {
        this.#bucketCounts[index] = count - 1;
        return;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// When the next request may start: a token bucket (GCRA form, reservations made ahead of time) at
// the rate in force, which a throttling pauses and lowers and which then recovers on a schedule;
// after a 429 with no stated limit to learn from, the rate is cut by a factor (AIMD).

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

interface PacerSettings {
  /** Requests per second at most (Infinity: no client-side limit). */
  ceilingRps: number;
  burstSeconds: number;
  minRps: number;
  decreaseFactor: number;
  increaseRpsPerSecond: number;
  /** 429s of requests already in flight when the first one came belong to the same episode. */
  minDecreaseIntervalMs: number;
}

class RatePacer {
  readonly #settings: PacerSettings;
  /** Theoretical arrival time of the token bucket. */
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Bumped on each throttling, so a request that reserved its start before it re-checks. */
  #pauseGeneration = 0;
  #schedule: RateSchedule | undefined;
  #lastDecreaseAt = Number.NEGATIVE_INFINITY;

  constructor(settings: PacerSettings) {
    this.#settings = settings;
  }

  /** Until when every request waits (epoch ms); in the past when not paused. */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  get pauseGeneration(): number {
    return this.#pauseGeneration;
  }

  /** Follows `schedule` from now on (a limit learned from the service's 429s). */
  follow(schedule: RateSchedule): void {
    this.#schedule = schedule;
  }

  /** Everyone waits until `resumeAt`, and starts again with no burst. */
  pauseUntil(resumeAt: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, resumeAt);
    this.#pauseGeneration += 1;
    this.#tat = Math.max(this.#tat, this.#pausedUntil + this.#burstToleranceMs(this.rateAt(resumeAt)));
  }

  /** Reserves the next start allowed by pause and rate; returns how long to wait for it. */
  reserveStart(now: number): number {
    const earliest = Math.max(now, this.#pausedUntil);
    const rate = this.rateAt(earliest);
    if (!Number.isFinite(rate)) return earliest - now;
    const interval = 1000 / rate;
    const tat = Math.max(this.#tat, earliest);
    const start = Math.max(earliest, tat - this.#burstToleranceMs(rate));
    this.#tat = tat + interval;
    return start - now;
  }

  /**
   * Reserves a start ahead of the others: as soon as the service's pause allows, whatever the
   * client's own rate; the start still counts against that rate, so those queued behind move back
   * by one interval instead of the rate being exceeded for good.
   */
  reserveStartAhead(now: number): number {
    const earliest = Math.max(now, this.#pausedUntil);
    const rate = this.rateAt(earliest);
    if (Number.isFinite(rate)) this.#tat = Math.max(this.#tat, earliest) + 1000 / rate;
    return earliest - now;
  }

  /**
   * AIMD for 429s without a stated wait: halve (by default) once per episode, recover linearly.
   * `observedRps` is the rate that drew the 429, for when no rate was in force.
   */
  decreaseBlindly(now: number, resumeAt: number, observedRps: () => number): void {
    // Only the first 429 of an episode lowers the rate: the others were sent before it arrived.
    if (now < this.#pausedUntil || now - this.#lastDecreaseAt < this.#settings.minDecreaseIntervalMs) return;
    const { ceilingRps, minRps, decreaseFactor, increaseRpsPerSecond } = this.#settings;
    const before = this.rateAt(now);
    const drawnRate = Number.isFinite(before) ? before : observedRps();
    const lowered = Math.max(minRps, drawnRate * decreaseFactor);
    this.#schedule = {
      from: resumeAt,
      rps: lowered,
      growthPerMs: increaseRpsPerSecond / 1000,
      growthPerWindow: 1,
      windowMs: 1,
      recoverTo: Number.isFinite(ceilingRps) ? ceilingRps : Math.max(drawnRate, lowered),
    };
    this.#lastDecreaseAt = now;
  }

  /** The rate in force at `time` (Infinity: unlimited); a schedule that has recovered ends. */
  rateAt(time: number): number {
    const schedule = this.#schedule;
    const ceiling = this.#settings.ceilingRps;
    if (!schedule) return ceiling;
    const elapsed = Math.max(0, time - schedule.from);
    const rate =
      schedule.rps * schedule.growthPerWindow ** (elapsed / schedule.windowMs) +
      schedule.growthPerMs * elapsed;
    if (schedule.recoverTo !== undefined && rate >= schedule.recoverTo) {
      this.#schedule = undefined;
      return ceiling;
    }
    return Math.min(rate, ceiling);
  }

  #burstToleranceMs(rate: number): number {
    if (!Number.isFinite(rate)) return 0;
    const burst = Math.max(1, Math.floor(rate * this.#settings.burstSeconds));
    return ((burst - 1) * 1000) / rate;
  }
}

// ---------------------------------------------------------------------------------------------
// Learns the service's rate limit from its 429s when it says how long to wait: the requests it
// accepted over the window that wait implies. The pacer then paces just under that limit, and the
// rate slowly grows again, so a raised limit (or a 429 that was not about the rate) is found again.

/** The service's limit as learned from its 429s. */
export interface LearnedLimit {
  /** Requests per second the service accepts over its window. */
  rps: number;
  /** The length of the service's window (ms), as implied by its first stated wait. */
  windowMs: number;
}

interface LearnerSettings {
  ceilingRps: number;
  minRps: number;
  targetShare: number;
  recoveryShare: number;
  decreaseFactor: number;
}

/** What the pacer knows of the moment a 429 came. */
interface ThrottleMoment {
  now: number;
  resumeAt: number;
  /** The rate in force when the throttling episode began. */
  episodeRps: number;
  pausedUntil: number;
}

// A rate limit refuses a client that has sent its allowance; a 429 after only a few requests is a
// passing refusal (a fault, another client on the key) and teaches nothing about the rate.
const MIN_STARTS_TO_LEARN = 30;

class LimitLearner {
  readonly #settings: LearnerSettings;
  #learned: LearnedLimit | undefined;

  constructor(settings: LearnerSettings) {
    this.#settings = settings;
  }

  get learned(): LearnedLimit | undefined {
    return this.#learned && { ...this.#learned };
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
   *
   * Returns the schedule to pace by; `"pause only"` when the 429 is left to the pause alone (too
   * few starts yet to be about the rate); undefined when nothing could be learned.
   */
  learn(
    moment: ThrottleMoment,
    history: StartHistory,
    idleMsSince: (from: number) => number = () => 0,
  ): RateSchedule | "pause only" | undefined {
    const { now, resumeAt } = moment;
    const first = history.first;
    if (first === undefined) return undefined;
    if (this.#learned === undefined && history.since(first) < MIN_STARTS_TO_LEARN) return "pause only";
    const sinceFirstMs = resumeAt - first;
    // The starts are divided by the time the client was sending: idle time (a create settling, a
    // pause between a watch's cycles) says nothing of what the service accepts, and counting it
    // would "learn" a rate far below the limit (one 429 after a settle taught 0.5 requests/s).
    const busyMs = Math.max(1, sinceFirstMs - idleMsSince(first));
    let rps = (history.since(first) * 1000) / busyMs;
    let windowMs = this.#learned?.windowMs;
    // A wait longer than the learned window belongs to another, longer window (an hourly limit).
    if (windowMs !== undefined && resumeAt - windowMs <= now) {
      const windowStart = history.bucketOf(resumeAt - windowMs);
      rps = Math.max(rps, (history.since(windowStart) * 1000) / windowMs);
    } else {
      windowMs = sinceFirstMs;
    }
    if (!(rps > 0)) return undefined;
    this.#learned = { rps, windowMs };
    const { ceilingRps, minRps, targetShare, recoveryShare, decreaseFactor } = this.#settings;
    // One episode lowers a rate already learned by `decreaseFactor` at most: 429s that are not
    // about the rate (a fault, another client on the key) must not spiral it down, since each
    // pause also lowers the rate measured next.
    const floor = Number.isFinite(moment.episodeRps) ? moment.episodeRps * decreaseFactor : 0;
    return {
      from: Math.max(resumeAt, moment.pausedUntil),
      rps: Math.min(ceilingRps, Math.max(minRps, floor, rps * targetShare)),
      growthPerMs: 0,
      growthPerWindow: 1 + recoveryShare,
      windowMs,
      recoverTo: Number.isFinite(ceilingRps) ? ceilingRps : undefined,
    };
  }
}
