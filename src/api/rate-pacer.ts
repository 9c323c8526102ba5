// When the next request may start: a token bucket (GCRA form, reservations made ahead of time) at
// the rate in force, which a throttling pauses and lowers and which then recovers on a schedule;
// after a 429 with no stated limit to learn from, the rate is cut by a factor (AIMD).

/**
 * How the rate evolves after a throttling: from `rps` at `from`, growing by `growthPerMs` requests
 * per second each ms (linear), or by the factor `growthPerWindow` each `windowMs` (geometric).
 */
export interface RateSchedule {
  from: number;
  rps: number;
  growthPerMs: number;
  growthPerWindow: number;
  windowMs: number;
  /** Reaching this rate ends the schedule (back to the ceiling); undefined: it never ends by itself. */
  recoverTo: number | undefined;
}

export interface PacerSettings {
  /** Requests per second at most (Infinity: no client-side limit). */
  ceilingRps: number;
  burstSeconds: number;
  minRps: number;
  decreaseFactor: number;
  increaseRpsPerSecond: number;
  /** 429s of requests already in flight when the first one came belong to the same episode. */
  minDecreaseIntervalMs: number;
}

export class RatePacer {
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
