// The one retry policy of every request pcsync sends (the API client's and the webhooks'), and the
// loop that sends each attempt through the limiter.

import { type AttemptResponse, headerValue, TransportFailure } from "../http/transport.js";
import { mayStillCommit, type ProofRules } from "./attempt-proof.js";
import type { RateLimiter } from "./rate-limiter.js";
import { type FailedRequest, ServiceError } from "./service-error.js";
import { readServiceError } from "./validate-response.js";

export interface RetryOptions {
  /** For faults and for throttling each. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking to wait longer than this fails at once instead of sleeping through it. */
  maxRetryAfterMs: number;
  /**
   * Such a 429 also holds back every later request until the wait ends (the hourly limit is the
   * key's). Not for a webhook receiver: there it ends the one request only.
   */
  holdsLongThrottle?: boolean;
}

// Under the README's fault rates a write's attempt fails about one time in five: all of 9 attempts
// fail once in 3 million (of 7, once in 100,000: soaks failed). 429s have a budget of their own. The
// 5 s cap fails a request to a service that is down within about 11 s (23 s at worst).
export const RETRY_DEFAULTS = {
  retries: 8,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 90_000,
} as const satisfies RetryOptions;

/** "Not now" rather than "no"; whether the failed attempt may still commit is attempt-proof.ts's to say. */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/** Full jitter, so clients that failed together do not come back together. `retryNumber` counts from 1. */
export function backoffDelayMs(
  retryNumber: number,
  options: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs">,
  random: () => number,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retryNumber - 1));
  return Math.floor(random() * ceiling);
}

/** Delta-seconds or an HTTP date; undefined when absent or unreadable. */
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

/** Its Retry-After header, else the service's throttled detail. */
export function throttleWaitMs(response: AttemptResponse, now: number): number | undefined {
  return (
    parseRetryAfter(headerValue(response.headers["retry-after"]), now) ??
    parseThrottleDetail(readServiceError(response.body)?.detail)
  );
}

/**
 * `unsafe` (POST): repeated only when the service cannot have processed it (429, connection
 * refused); otherwise the failure carries `outcomeUnknown` and the caller decides.
 */
export type RetrySafety = "idempotent" | "unsafe";

/** The loop's counters, and the state it keeps across requests. */
export interface RetryStats {
  retries: number;
  /** 429 responses. */
  throttled: number;
  /**
   * When an unanswered update or delete was last sent again: the first may still be applied later
   * (see `mayLandUntil` in apply-plan.ts).
   */
  lastUnansweredWriteAt?: number;
  /** Until when the key is throttled beyond the longest wait: requests not yet sent are refused. */
  throttledUntil?: number;
}

export interface RetryContext {
  readonly limiter: RateLimiter;
  readonly options: RetryOptions;
  /** Once aborted, no attempt starts and no retry waits. */
  readonly signal: AbortSignal | undefined;
  readonly proofRules: ProofRules;
  readonly stats: RetryStats;
  readonly random: () => number;
  readonly now: () => number;
  /** Rejects with the signal's reason once the signal aborts. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly trace: (line: string) => void;
}

export interface RetriedRequest {
  failedRequest: FailedRequest;
  /** Method, path and query. */
  traceLabel: string;
  safety: RetrySafety;
  /** DELETE: a 404 after an attempt whose outcome is unknown means that attempt did the job. */
  notFoundMeansDone?: boolean | undefined;
  /** Goes ahead of the sender's own pacing (see rate-limiter.ts). */
  ahead?: boolean | undefined;
  /** Statuses other than 429 sent again (idempotent requests only); default isRetryableStatus. */
  retryStatus?: ((status: number) => boolean) | undefined;
  /** Throws a TransportFailure when no answer came. */
  send: () => Promise<AttemptResponse>;
  /**
   * Run once, slot held, just before the first attempt leaves (a write's journal intent): a request
   * stopped before that never runs it. Throwing stops the request.
   */
  beforeFirstAttempt?: (() => Promise<void>) | undefined;
}

/** An answer (done, or one that retrying could not change) or a transport failure. */
export type LastAttempt = {
  attempts: number;
  /** Some attempt, the last included, may have been or may still be applied. */
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
  let outcomeUnknown = false;
  const aborted = () =>
    new ServiceError("request_aborted", failedRequest, {
      attempts,
      outcomeUnknown,
    });
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
    const release = await limiter.acquire(signal, { ahead: request.ahead }).catch((error: unknown) => {
      throw signal?.aborted ? aborted() : error;
    });
    // Sent, it would only be refused too, and count against the key.
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
    // Sent again, an update or delete that may still commit may land after the repeat: noted for the
    // run's rollback (a create's POST is settled by apply's rule instead).
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
      // A wait within the cap holds every request until then. One beyond it fails this request at
      // once and pauses nobody: the others fail promptly on their own 429s if still refused.
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
