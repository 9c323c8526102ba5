// When cycles run: one at a time, the next an interval (with jitter) after the previous started, or as
// soon as it ends if it ran longer, so slow cycles never stack. `trigger()` and early checks start one now.

import { setLongTimeout } from "../abortable-sleep.js";
import { monotonicNow } from "./monotonic-clock.js";

export interface LoopOptions {
  intervalMs: number;
  /** Each wait is the interval times 1 ± up to this share (0.1 for --jitter 10). */
  jitterShare: number;
  once: boolean;
  /** Never rejects. */
  cycle: () => Promise<void>;
  /** Once aborted, no new cycle starts; the one running finishes. */
  stop: AbortSignal;
  random?: () => number;
  /** The monotonic clock (tests); every time the loop keeps or `early.nextAt()` gives is on it. */
  now?: () => number;
  /** Between cycles: when to check (on `now`'s clock), and the check; true starts a cycle now. */
  early?: { nextAt(): number | undefined; check(): Promise<boolean> };
}

export type LoopState = Readonly<
  Pick<WatchLoop, "startedAt" | "lastCycleEndedAt" | "cycleStartedAt" | "cycles" | "running">
>;

export class WatchLoop {
  // On the monotonic clock, not epoch ms: a step of the wall clock neither skips a wait nor fails /healthz.
  readonly startedAt: number;
  lastCycleEndedAt: number | undefined;
  cycleStartedAt: number | undefined;
  cycles = 0;
  running = false;
  readonly #options: LoopOptions;
  readonly #random: () => number;
  readonly #now: () => number;
  #triggered = false;
  #wake: (() => void) | undefined;

  constructor(options: LoopOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? monotonicNow;
    this.startedAt = this.#now();
    options.stop.addEventListener("abort", () => this.#wake?.(), { once: true });
  }

  /** Starts a cycle now, or right after the one running. */
  trigger(): void {
    this.#triggered = true;
    this.#wake?.();
  }

  nextDelayMs(): number {
    const { intervalMs, jitterShare } = this.#options;
    return Math.max(0, intervalMs * (1 + jitterShare * (2 * this.#random() - 1)));
  }

  async run(): Promise<void> {
    const { stop, once, cycle } = this.#options;
    while (!stop.aborted) {
      const started = this.#now();
      this.#triggered = false;
      this.cycleStartedAt = started;
      this.running = true;
      try {
        await cycle();
      } finally {
        this.running = false;
        this.cycleStartedAt = undefined;
        this.cycles += 1;
        this.lastCycleEndedAt = this.#now();
      }
      if (once || stop.aborted) return;
      if (this.#triggered) continue;
      await this.#wait(started + this.nextDelayMs());
    }
  }

  async #wait(due: number): Promise<void> {
    const { early, stop } = this.#options;
    while (!stop.aborted && !this.#triggered) {
      const at = early?.nextAt();
      if (early === undefined || at === undefined || at >= due) {
        await this.#sleepUntil(due);
        return;
      }
      await this.#sleepUntil(at);
      if (stop.aborted || this.#triggered || (await early.check()) || this.#now() >= due) return;
    }
  }

  #sleepUntil(at: number): Promise<void> {
    const delay = at - this.#now();
    if (delay <= 0 || this.#options.stop.aborted) return Promise.resolve();
    return new Promise((done) => {
      const wake = () => {
        this.#wake = undefined;
        done();
      };
      const cancel = setLongTimeout(wake, delay);
      this.#wake = () => {
        cancel();
        wake();
      };
    });
  }
}
