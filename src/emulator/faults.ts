// Decides which requests fail and how: injected latency, random 503/429 (503s with Retry-After if
// asked), a proxy's 502/504 pages, writes committed and then dropped or answered 500, and per-key
// rate limits. One seeded PRNG drives every random decision, so a seed replays the faults.

import { checkLogErrorFaults } from "./log-faults.js";
import { createRandom, type Random } from "./prng.js";
import { SlidingWindowLimiter } from "./rate-limiter.js";
import type { FaultOptions, LogErrorFault } from "./types.js";

const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "PUT", "DELETE"]);

/** Throws a RangeError naming the first option out of range; the CLI checks flags before this. */
export function checkFaultOptions(faults: FaultOptions): void {
  const rates = [
    ["fail503Rate", faults.fail503Rate],
    ["fail429Rate", faults.fail429Rate],
    ["dropWriteRate", faults.dropWriteRate],
    ["commitThen500Rate", faults.commitThen500Rate],
    ["proxyErrorRate", faults.proxyErrorRate],
  ] as const;
  for (const [name, rate] of rates) {
    if (rate !== undefined && !(rate >= 0 && rate <= 1)) {
      throw new RangeError(`faults.${name} must be between 0 and 1, got ${rate}`);
    }
  }
  const counts = [
    ["latencyMs", faults.latencyMs],
    ["fail429WaitSeconds", faults.fail429WaitSeconds],
    ["fail503RetryAfterSeconds", faults.fail503RetryAfterSeconds],
    ["rateLimit.perMinute", faults.rateLimit?.perMinute],
    ["rateLimit.perHour", faults.rateLimit?.perHour],
    ["maxPageSize", faults.maxPageSize],
  ] as const;
  for (const [name, count] of counts) {
    if (count !== undefined && !(Number.isFinite(count) && count >= 0)) {
      throw new RangeError(`faults.${name} must be a non-negative number, got ${count}`);
    }
  }
  checkLogErrorFaults(faults.logErrors ?? []);
}

export class FaultInjector {
  private faults: FaultOptions = {};
  private random: Random = Math.random;
  private limiter = new SlidingWindowLimiter({});

  constructor(faults: FaultOptions = {}) {
    this.configure(faults);
  }

  /** Replaces every fault setting; a new seed restarts the random sequence, and limits start afresh. */
  configure(faults: FaultOptions): void {
    checkFaultOptions(faults);
    this.faults = structuredClone(faults);
    this.random = createRandom(faults.seed ?? Math.floor(Math.random() * 2 ** 32));
    this.limiter = new SlidingWindowLimiter(faults.rateLimit ?? {});
  }

  get latencyMs(): number {
    return this.faults.latencyMs ?? 0;
  }

  /** Which configs log errors after a change (log-stream.ts reads them on every logs request). */
  get logErrors(): readonly LogErrorFault[] {
    return this.faults.logErrors ?? [];
  }

  /** The most records a page holds (undefined: as many as `limit` asks). */
  get maxPageSize(): number | undefined {
    return this.faults.maxPageSize;
  }

  private roll(rate: number | undefined): boolean {
    // No draw at rate 0, so enabling one fault does not shift another's sequence.
    if (rate === undefined || rate <= 0) return false;
    return this.random() < rate;
  }

  shouldFail503(): boolean {
    return this.roll(this.faults.fail503Rate);
  }

  /** Seconds an injected 503 asks to wait (a Retry-After header), or undefined for none. */
  get fail503RetryAfterSeconds(): number | undefined {
    return this.faults.fail503RetryAfterSeconds;
  }

  /** A proxy's error for this request, 502 or 504, or undefined when it reaches the service. */
  proxyError(): 502 | 504 | undefined {
    if (!this.roll(this.faults.proxyErrorRate)) return undefined;
    return this.random() < 0.5 ? 502 : 504;
  }

  /** Whether this create, already committed, is answered 500 instead of its record. */
  shouldAnswer500AfterCommit(): boolean {
    return this.roll(this.faults.commitThen500Rate);
  }

  /** Seconds an injected 429 asks the client to wait. */
  get fail429WaitSeconds(): number {
    return this.faults.fail429WaitSeconds ?? 1;
  }

  shouldFail429(): boolean {
    return this.roll(this.faults.fail429Rate);
  }

  shouldDropWrite(method: string): boolean {
    return WRITE_METHODS.has(method) && this.roll(this.faults.dropWriteRate);
  }

  /** Seconds the key must wait, or undefined when the request is within its limits. */
  throttle(key: string, nowMs: number): number | undefined {
    return this.limiter.take(key, nowMs);
  }
}
