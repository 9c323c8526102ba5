// The starts the service counted, in buckets of 100 ms kept for an hour (the longest window worth
// learning: a longer wait than the client allows fails the request anyway). The pacer estimates
// the rate that drew a 429 from it, the learner the service's limit.

const BUCKET_MS = 100;
const HISTORY_MS = 3_600_000;

export class StartHistory {
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
