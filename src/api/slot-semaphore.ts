// A bound on requests in flight: a request takes a slot before it starts and gives it back when
// done; waiters are served in order, and one whose signal aborts leaves the queue.

export class SlotSemaphore {
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
