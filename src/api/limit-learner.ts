// Learns the service's rate limit from its 429s when it says how long to wait: the requests it
// accepted over the window that wait implies. The pacer then paces just under that limit, and the
// rate slowly grows again, so a raised limit (or a 429 that was not about the rate) is found again.

import type { RateSchedule } from "./rate-pacer.js";
import type { StartHistory } from "./start-history.js";

/** The service's limit as learned from its 429s. */
export interface LearnedLimit {
  /** Requests per second the service accepts over its window. */
  rps: number;
  /** The length of the service's window (ms), as implied by its first stated wait. */
  windowMs: number;
}

export interface LearnerSettings {
  ceilingRps: number;
  minRps: number;
  targetShare: number;
  recoveryShare: number;
  decreaseFactor: number;
}

/** What the pacer knows of the moment a 429 came. */
export interface ThrottleMoment {
  now: number;
  resumeAt: number;
  /** The rate in force when the throttling episode began. */
  episodeRps: number;
  pausedUntil: number;
}

// A rate limit refuses a client that has sent its allowance; a 429 after only a few requests is a
// passing refusal (a fault, another client on the key) and teaches nothing about the rate.
const MIN_STARTS_TO_LEARN = 30;

export class LimitLearner {
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
