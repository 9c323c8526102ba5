// Decides which requests fail and how: injected latency, random 503/429 (503s with Retry-After if
// asked), a proxy's 502/504 pages, writes committed and then dropped or answered 500, and per-key
// rate limits. One seeded PRNG drives every random decision, so a seed replays the faults.

import { checkLogErrorFaults } from "./log-faults.js";
import { createRandom, type Random } from "./prng.js";
import { SlidingWindowLimiter } from "./rate-limiter.js";
import type { FaultOptions } from "./types.js";

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const RATES = ["fail503Rate", "fail429Rate", "dropWriteRate", "commitThen500Rate", "proxyErrorRate"] as const;
const COUNTS = ["latencyMs", "fail429WaitSeconds", "fail503RetryAfterSeconds", "maxPageSize"] as const;

/** Throws a RangeError naming the first option out of range; the CLI checks flags before this. */
export function checkFaultOptions(faults: FaultOptions): void {
  for (const name of RATES) {
    const rate = faults[name];
    if (rate !== undefined && !(rate >= 0 && rate <= 1)) {
      throw new RangeError(`faults.${name} must be between 0 and 1, got ${rate}`);
    }
  }
  const { perMinute, perHour } = faults.rateLimit ?? {};
  const counts: [string, number | undefined][] = COUNTS.map((name) => [name, faults[name]]);
  counts.splice(3, 0, ["rateLimit.perMinute", perMinute], ["rateLimit.perHour", perHour]);
  for (const [name, count] of counts) {
    if (count !== undefined && !(Number.isFinite(count) && count >= 0)) {
      throw new RangeError(`faults.${name} must be a non-negative number, got ${count}`);
    }
  }
  checkLogErrorFaults(faults.logErrors ?? []);
}

export class FaultInjector {
  /** The settings as configured; the log stream reads `logErrors` on every logs request. */
  options: Readonly<FaultOptions> = {};
  private random: Random = Math.random;
  private limiter = new SlidingWindowLimiter({});

  constructor(faults: FaultOptions = {}) {
    this.configure(faults);
  }

  /** Replaces every fault setting; a new seed restarts the random sequence, and limits start afresh. */
  configure(faults: FaultOptions): void {
    checkFaultOptions(faults);
    this.options = structuredClone(faults);
    this.random = createRandom(faults.seed ?? Math.floor(Math.random() * 2 ** 32));
    this.limiter = new SlidingWindowLimiter(faults.rateLimit ?? {});
  }

  private roll(rate: number | undefined): boolean {
    // No draw at rate 0, so enabling one fault does not shift another's sequence.
    return rate !== undefined && rate > 0 && this.random() < rate;
  }

  shouldFail503(): boolean {
    return this.roll(this.options.fail503Rate);
  }

  /** A proxy's error for this request, 502 or 504, or undefined when it reaches the service. */
  proxyError(): 502 | 504 | undefined {
    if (!this.roll(this.options.proxyErrorRate)) return undefined;
    return this.random() < 0.5 ? 502 : 504;
  }

  /** Whether this create, already committed, is answered 500 instead of its record. */
  shouldAnswer500AfterCommit(): boolean {
    return this.roll(this.options.commitThen500Rate);
  }

  shouldFail429(): boolean {
    return this.roll(this.options.fail429Rate);
  }

  shouldDropWrite(method: string): boolean {
    return WRITE_METHODS.has(method) && this.roll(this.options.dropWriteRate);
  }

  /** Seconds the key must wait, or undefined when the request is within its limits. */
  throttle(key: string, nowMs: number): number | undefined {
    return this.limiter.take(key, nowMs);
  }
}
