// The retry loop of a request: each attempt waits for a slot of the rate limiter, and an attempt
// that failed is sent again when the retry policy (retry.ts) allows it, after the wait it says.
// The client sends each attempt and turns the last one into a response or an error.

import type { RateLimiter } from "./rate-limiter.js";
import {
  backoffDelayMs,
  isRetryableStatus,
  parseRetryAfter,
  parseThrottleDetail,
  type RetryOptions,
} from "./retry.js";
import { type FailedRequest, ServiceError } from "./service-error.js";
import { type AttemptResponse, headerValue, TransportFailure } from "./transport.js";
import { readServiceError } from "./validate-response.js";

/**
 * `idempotent`: repeated on 429, 502-504 and connection failures. `unsafe` (POST): repeated only
 * when the service cannot have processed it (429, connection refused); otherwise the failure is
 * thrown with `outcomeUnknown` so the caller decides (createConfig re-reads the family).
 */
export type RetrySafety = "idempotent" | "unsafe";

/** What the loop shares with its client: the limiter, the policy, the clock and the counters. */
export interface RetryContext {
  readonly limiter: RateLimiter;
  readonly options: RetryOptions;
  /** Once aborted, no attempt starts and no retry waits. */
  readonly signal: AbortSignal | undefined;
  /** The client's counters of retries and 429 answers. */
  readonly stats: { retries: number; throttled: number };
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
  notFoundMeansDone: boolean;
  /** Goes ahead of the client's own pacing (a create's settle re-reads and resend; see rate-limiter.ts). */
  ahead?: boolean | undefined;
  /** Sends one attempt; throws a TransportFailure when no answer came. */
  send: () => Promise<AttemptResponse>;
}

/** The last attempt: an answer (done, or one that retrying could not change) or a transport failure. */
export type LastAttempt = { attempts: number; earlierOutcomeUnknown: boolean } & (
  | {
      response: AttemptResponse;
      /** A 2xx, or the 404 of a DELETE that an earlier attempt already did. */
      done: boolean;
      failure?: undefined;
    }
  | { failure: TransportFailure; response?: undefined }
);

/** Sends `request` until an attempt is done or may not, or need not, be repeated. */
export async function requestWithRetry(context: RetryContext, request: RetriedRequest): Promise<LastAttempt> {
  const { limiter, options, signal, stats, trace } = context;
  const { failedRequest, traceLabel, safety } = request;
  const { retries, maxRetryAfterMs } = options;
  let attempts = 0;
  let faultRetries = 0;
  let throttleRetries = 0;
  let earlierOutcomeUnknown = false;
  // Interrupted before an attempt went out: what was sent so far decides what the caller reports.
  const aborted = () =>
    new ServiceError("request_aborted", failedRequest, {
      attempts,
      outcomeUnknown: failedRequest.method !== "GET" && earlierOutcomeUnknown,
    });
  const backoff = (retryNumber: number) =>
    context.sleep(backoffDelayMs(retryNumber, options, context.random)).catch((sleepError: unknown) => {
      throw signal?.aborted ? aborted() : sleepError;
    });
  for (;;) {
    let response: AttemptResponse;
    let release: () => void;
    try {
      signal?.throwIfAborted();
      release = await limiter.acquire(signal, { ahead: request.ahead });
    } catch (error) {
      if (signal?.aborted) throw aborted();
      throw error;
    }
    attempts += 1;
    try {
      response = await request.send();
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      const canRepeat = safety === "idempotent" || !error.sent;
      if (!error.retryable || !canRepeat || faultRetries >= retries) {
        return { failure: error, attempts, earlierOutcomeUnknown };
      }
      earlierOutcomeUnknown ||= error.sent;
      faultRetries += 1;
      stats.retries += 1;
      trace(`${traceLabel}: retry ${faultRetries}/${retries} after ${error.reason}`);
      // The slot is not held through the backoff: others may use it meanwhile.
      release();
      await backoff(faultRetries);
      continue;
    } finally {
      release();
    }

    const { status } = response;
    if (status >= 200 && status < 300) return { response, done: true, attempts, earlierOutcomeUnknown };
    if (status === 404 && request.notFoundMeansDone && earlierOutcomeUnknown) {
      trace(`${traceLabel}: 404 after an attempt with unknown outcome; it was done then`);
      return { response, done: true, attempts, earlierOutcomeUnknown };
    }
    if (status === 429) {
      stats.throttled += 1;
      const serverWaitMs =
        parseRetryAfter(headerValue(response.headers["retry-after"]), context.now()) ??
        parseThrottleDetail(readServiceError(response.body)?.detail);
      const waitMs = serverWaitMs ?? backoffDelayMs(throttleRetries + 1, options, context.random);
      // A wait beyond the cap fails this request at once; the others must not sleep through it
      // either, so it pauses nobody (they fail on their own 429s, promptly, if the service
      // still refuses). A wait within the cap holds every request until then, not just this one,
      // and a wait the service stated also tells the limiter the service's limit.
      const withinCap = waitMs <= maxRetryAfterMs;
      if (withinCap) limiter.noteThrottled(waitMs, { stated: serverWaitMs !== undefined });
      if (throttleRetries < retries && withinCap) {
        throttleRetries += 1;
        stats.retries += 1;
        trace(
          `${traceLabel}: throttled; retry ${throttleRetries}/${retries} in ${waitMs} ms${serverWaitMs === undefined ? " (backoff)" : ""}`,
        );
        continue;
      }
    } else if (isRetryableStatus(status) && safety === "idempotent" && faultRetries < retries) {
      earlierOutcomeUnknown = true;
      faultRetries += 1;
      stats.retries += 1;
      trace(`${traceLabel}: retry ${faultRetries}/${retries} after ${status}`);
      await backoff(faultRetries);
      continue;
    }
    return { response, done: false, attempts, earlierOutcomeUnknown };
  }
}
