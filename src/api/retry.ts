// When and how long to wait before sending a request again: capped full-jitter exponential
// backoff, and the service's own wait time on 429 (Retry-After, or the detail of its body).

export interface RetryOptions {
  /** Retries after the first attempt, for faults and for throttling each. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking to wait longer than this fails at once instead of sleeping through it. */
  maxRetryAfterMs: number;
}

// Eight retries: under the fault rates the README guarantees (15% 503, 5% writes committed but
// unanswered), an attempt of a write fails about one time in five, so all of 7 attempts fail once in
// 100,000 and a soak of 20 applies (some 3,000 requests) failed several times in a hundred; all of 9
// fail once in 3 million. Throttling (429) has a budget of its own. The backoff is capped at 5 s, so
// that a service that is down still fails a request within about 11 s (23 s at worst).
export const RETRY_DEFAULTS = {
  retries: 8,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 90_000,
} as const satisfies RetryOptions;

/** Statuses that say "not now" rather than "no": a later attempt can succeed. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * 502/503/504 come from the service or a proxy in front of it, possibly after the request was
 * processed; 429 is refused before processing.
 */
export function mayHaveBeenProcessed(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

/**
 * Full jitter: uniformly random in [0, min(cap, base * 2^(n-1))], so clients that failed together
 * do not come back together. `retryNumber` counts from 1.
 */
export function backoffDelayMs(
  retryNumber: number,
  options: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs">,
  random: () => number,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retryNumber - 1));
  return Math.floor(random() * ceiling);
}

/** Retry-After as delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The service's 429 detail: `Request was throttled. Expected available in 3 seconds.` */
export function parseThrottleDetail(detail: string | undefined): number | undefined {
  if (detail === undefined) return undefined;
  const match = /expected available in (\d+(?:\.\d+)?) seconds?/i.exec(detail);
  return match?.[1] === undefined ? undefined : Math.ceil(Number(match[1]) * 1000);
}
