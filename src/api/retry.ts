// The one retry policy of every request pcsync sends (the API client's and the webhooks'): which
// failures are sent again, capped full-jitter exponential backoff, the wait a 429 states
// (Retry-After, or the service's detail), and the loop that sends each attempt through the limiter.

import { type AttemptResponse, headerValue, TransportFailure } from "../http/transport.js";
import { mayStillCommit, type ProofRules } from "./attempt-proof.js";
import type { RateLimiter } from "./rate-limiter.js";
import { type FailedRequest, ServiceError } from "./service-error.js";
import { readServiceError } from "./validate-response.js";

export interface RetryOptions {
  /** Retries after the first attempt, for faults and for throttling each. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking to wait longer than this fails at once instead of sleeping through it. */
  maxRetryAfterMs: number;
  /**
   * Such a 429 also holds back every later request until the wait ends (the service's hourly limit
   * is the key's: a request sent then only counts against it). Not for an endpoint of the user's (a
   * webhook receiver): there it ends the one request, and the next is sent when it comes.
   */
  holdsLongThrottle?: boolean;
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

/**
 * Statuses that say "not now" rather than "no" from the service (429, and 502/503/504 from it or a
 * proxy in front of it): a later attempt can succeed. Whether the failed one may still commit is
 * attempt-proof.ts's to say.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
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
  const match = /expected available in (\d+(?:\.\d+)?) seconds?/i.exec(detail ?? "");
  return match?.[1] === undefined ? undefined : Math.ceil(Number(match[1]) * 1000);
}

/** The wait a 429 states: its Retry-After header, else the service's throttled detail. */
export function throttleWaitMs(response: AttemptResponse, now: number): number | undefined {
  return (
    parseRetryAfter(headerValue(response.headers["retry-after"]), now) ??
    parseThrottleDetail(readServiceError(response.body)?.detail)
  );
}

/**
 * `idempotent`: repeated on 429, retryable statuses and connection failures. `unsafe` (POST):
 * repeated only when the service cannot have processed it (429, connection refused); otherwise the
 * failure is thrown with `outcomeUnknown` so the caller decides (apply's create re-reads the family).
 */
export type RetrySafety = "idempotent" | "unsafe";

/** The loop's counters, and the state it keeps across requests. */
export interface RetryStats {
  retries: number;
  /** 429 responses. */
  throttled: number;
  /**
   * When an update or delete last went unanswered (the client gave up, or a 502, 504 or a 503
   * without Retry-After came) and was sent again: the first may still be applied later (see
   * `mayLandUntil` in apply-plan.ts).
   */
  lastUnansweredWriteAt?: number;
  /**
   * Until when the service throttled this key, where it asked for a wait beyond the longest the
   * client waits (an hourly limit spent): requests not yet sent are refused until then, unsent.
   */
  throttledUntil?: number;
}

/** What the loop shares with its sender: the limiter, the policy, the clock and the counters. */
export interface RetryContext {
  readonly limiter: RateLimiter;
  readonly options: RetryOptions;
  /** Once aborted, no attempt starts and no retry waits. */
  readonly signal: AbortSignal | undefined;
  /** How a failed attempt is judged (see attempt-proof.ts). */
  readonly proofRules: ProofRules;
  readonly stats: RetryStats;
  readonly random: () => number;
  readonly now: () => number;
  /** Sleeps; rejects with the signal's reason once the signal aborts. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly trace: (line: string) => void;
}

export interface RetriedRequest {
  /** The request as its errors name it. */
  failedRequest: FailedRequest;
  /** How trace lines name the request: method, path and query. */
  traceLabel: string;
  safety: RetrySafety;
  /** DELETE: a 404 after an attempt whose outcome is unknown means that attempt did the job. */
  notFoundMeansDone?: boolean | undefined;
  /** Goes ahead of the sender's own pacing (a create's settle re-reads and resend; see rate-limiter.ts). */
  ahead?: boolean | undefined;
  /** Statuses other than 429 sent again (idempotent requests only); default isRetryableStatus. */
  retryStatus?: ((status: number) => boolean) | undefined;
  /** Sends one attempt; throws a TransportFailure when no answer came. */
  send: () => Promise<AttemptResponse>;
  /**
   * Run once, its slot held, just before the first attempt leaves (a write's journal intent): a
   * request that never gets a slot, or is stopped first, never runs it. Throwing stops the request.
   */
  beforeFirstAttempt?: (() => Promise<void>) | undefined;
}

/** The last attempt: an answer (done, or one that retrying could not change) or a transport failure. */
export type LastAttempt = {
  attempts: number;
  /** A write of which some attempt, the last included, may have been or may still be applied. */
  outcomeUnknown: boolean;
} & (
  | {
      response: AttemptResponse;
      /** A 2xx, or the 404 of a DELETE that an earlier attempt already did. */
      done: boolean;
      failure?: undefined;
    }
  | { failure: TransportFailure; response?: undefined }
);

/** Sends `request` until an attempt is done or may not, or need not, be repeated. */
export async function sendWithRetry(context: RetryContext, request: RetriedRequest): Promise<LastAttempt> {
  const { limiter, options, signal, stats, trace } = context;
  const { failedRequest, traceLabel, safety } = request;
  const retryStatus = request.retryStatus ?? isRetryableStatus;
  const { retries, maxRetryAfterMs } = options;
  let attempts = 0;
  let faultRetries = 0;
  let throttleRetries = 0;
  /** Whether an attempt so far may have been, or may still be, applied (never for a GET). */
  let outcomeUnknown = false;
  // Interrupted before an attempt went out: what was sent so far decides what the caller reports.
  const aborted = () =>
    new ServiceError("request_aborted", failedRequest, {
      attempts,
      outcomeUnknown,
    });
  // A fault (no answer, or a status that says "not now") is sent again after the backoff.
  const retryFault = (why: string | number) => {
    faultRetries += 1;
    stats.retries += 1;
    trace(`${traceLabel}: retry ${faultRetries}/${retries} after ${why}`);
    return context
      .sleep(backoffDelayMs(faultRetries, options, context.random))
      .catch((sleepError: unknown) => {
        throw signal?.aborted ? aborted() : sleepError;
      });
  };
  for (;;) {
    // The limiter rejects at once, and a request waiting in it, once the signal aborts.
    const release = await limiter.acquire(signal, { ahead: request.ahead }).catch((error: unknown) => {
      throw signal?.aborted ? aborted() : error;
    });
    // The service throttled this key for longer than the client waits: a request not sent yet is
    // not sent (it would only be refused too, and count against the key), saying until when.
    const throttledUntil = stats.throttledUntil;
    if (attempts === 0 && throttledUntil !== undefined && context.now() < throttledUntil) {
      release();
      throw new ServiceError("request_throttled", failedRequest, {
        attempts,
        outcomeUnknown,
        until: new Date(throttledUntil).toISOString(),
      });
    }
    if (attempts === 0 && request.beforeFirstAttempt !== undefined) {
      try {
        await request.beforeFirstAttempt();
      } catch (error) {
        release();
        throw error;
      }
    }
    attempts += 1;
    let response: AttemptResponse | TransportFailure;
    try {
      response = await request.send();
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      response = error;
    } finally {
      // The slot is not held through a backoff or a pause: others may use it meanwhile.
      release();
    }
    // An attempt the service may still apply (src/api/attempt-proof.ts) leaves the request's outcome
    // unknown. Sent again, an update or delete may still land after the repeat: noted for the run's
    // rollback (a create's POST is settled by apply's rule instead).
    if (
      failedRequest.method !== "GET" &&
      (response instanceof TransportFailure || response.status >= 300) &&
      mayStillCommit(response, context.proofRules)
    ) {
      outcomeUnknown = true;
      if (safety === "idempotent") stats.lastUnansweredWriteAt = context.now();
    }
    if (response instanceof TransportFailure) {
      const canRepeat = safety === "idempotent" || !response.sent;
      if (!response.retryable || !canRepeat || faultRetries >= retries) {
        return { failure: response, attempts, outcomeUnknown };
      }
      await retryFault(response.reason);
      continue;
    }
    const { status } = response;
    if (status >= 200 && status < 300) return { response, done: true, attempts, outcomeUnknown };
    if (status === 404 && request.notFoundMeansDone === true && outcomeUnknown) {
      trace(`${traceLabel}: 404 after an attempt with unknown outcome; it was done then`);
      return { response, done: true, attempts, outcomeUnknown };
    }
    if (status === 429) {
      stats.throttled += 1;
      const serverWaitMs = throttleWaitMs(response, context.now());
      const waitMs = serverWaitMs ?? backoffDelayMs(throttleRetries + 1, options, context.random);
      // A wait beyond the cap fails this request at once; the others must not sleep through it
      // either, so it pauses nobody (they fail on their own 429s, promptly, if the service
      // still refuses). A wait within the cap holds every request until then, not just this one.
      const withinCap = waitMs <= maxRetryAfterMs;
      if (withinCap) limiter.noteThrottled(waitMs);
      else if (options.holdsLongThrottle !== false)
        stats.throttledUntil = Math.max(stats.throttledUntil ?? 0, context.now() + waitMs);
      if (throttleRetries < retries && withinCap) {
        throttleRetries += 1;
        stats.retries += 1;
        trace(
          `${traceLabel}: throttled; retry ${throttleRetries}/${retries} in ${waitMs} ms${serverWaitMs === undefined ? " (backoff)" : ""}`,
        );
        continue;
      }
    } else if (retryStatus(status) && safety === "idempotent" && faultRetries < retries) {
      await retryFault(status);
      continue;
    }
    return { response, done: false, attempts, outcomeUnknown };
  }
}
