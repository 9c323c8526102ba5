// What a failed POST proves, in one table: whether the service refused it before processing, answered
// it (so nothing of it can commit later), or may still be processing it. create-config.ts acts on it.
//
// A service that answered is done with the request: it may have committed before answering (Django
// does not wrap a request in a transaction by default, so a 500 can follow a commit), but nothing of
// it commits later, so one re-read made after the answer decides. A request nobody answered (a
// timeout, a connection lost after sending) or that a proxy answered for the service (502, 504, a
// 5xx page that is not the service's `{type, code, detail}` body) may still be queued upstream and
// commit later: only a re-read after the proof window decides it. A 429, a request never sent, and
// a 503 with Retry-After (how the service and well-behaved proxies shed load, as client-go reads it)
// were refused before any processing.

import { isRequestError, isServiceError } from "../api/index.js";

/** What the client knows of a failed POST. */
export type PostFailure =
  /** Nothing went out (connection refused, DNS): not processed. */
  | { kind: "not_sent" }
  /** Sent, and no answer came (a timeout, a reset after sending, headers too large to read). */
  | { kind: "no_answer" }
  /** An answer with a non-2xx, non-3xx status. */
  | {
      kind: "status";
      status: number;
      /** The body is the service's own error envelope: a JSON object with string type, code, detail. */
      serviceEnvelope: boolean;
      /** The answer carried a readable Retry-After. */
      retryAfter: boolean;
    }
  /** A 2xx whose body cannot be read, or a redirect: the service answered, but not with a record. */
  | { kind: "unreadable_answer" };

/**
 * - `refused`: not processed; sent again after the stated pause or backoff (a 503 with Retry-After
 *   is first confirmed by one re-read, since it proves nothing beyond the proxy's word).
 * - `answered`: the service finished with it; one re-read after the answer decides, and a POST it
 *   shows absent is sent again after backoff.
 * - `in_flight`: may still commit; re-read over the proof window before anything is sent again.
 * - `unreadable`: answered with something that is not a record; one re-read decides, and without
 *   the record the outcome stays unknown (the service may hold it in a form pcsync cannot match),
 *   never resent.
 * - `rejected`: the service said no (a 4xx other than 429): not made, not sent again.
 */
export type PostFailureKind = "refused" | "answered" | "in_flight" | "unreadable" | "rejected";

// Answered by a proxy in front of the service, which may have forwarded the request and given up
// on it while the service still works on it.
const PROXY_STATUSES: ReadonlySet<number> = new Set([502, 504]);

/**
 * What `failure` proves about the POST, by the rule at the top of this file. `fiveXxInFlight`:
 * every 5xx is taken for in flight, whatever its body, for a proxy that imitates the service's
 * envelope (`--treat-5xx-as-in-flight`).
 */
export function classifyPostFailure(
  failure: PostFailure,
  rules: { fiveXxInFlight: boolean },
): PostFailureKind {
  switch (failure.kind) {
    case "not_sent":
      return "refused";
    case "no_answer":
      return "in_flight";
    case "unreadable_answer":
      return "unreadable";
    case "status": {
      const { status } = failure;
      if (status === 429) return "refused";
      if (status < 500) return "rejected";
      if (rules.fiveXxInFlight || PROXY_STATUSES.has(status)) return "in_flight";
      if (status === 503 && failure.retryAfter) return "refused";
      return failure.serviceEnvelope ? "answered" : "in_flight";
    }
  }
}

/**
 * The facts of a failed POST as the client reported them; undefined for an error that is not a
 * failed request (a bug, an abort: the caller handles those).
 */
export function postFailureOf(error: unknown): PostFailure | undefined {
  if (isServiceError(error, "malformed_response", "response_too_large")) return { kind: "unreadable_answer" };
  if (isRequestError(error, "api_error")) {
    return {
      kind: "status",
      status: error.status ?? 0,
      serviceEnvelope: error.facts.serviceEnvelope === true,
      retryAfter: error.facts.retryAfterMs !== undefined,
    };
  }
  if (!isRequestError(error)) return undefined;
  switch (error.code) {
    case "redirect_not_followed":
      return { kind: "unreadable_answer" };
    case "timeout":
    case "response_headers_too_large":
      return { kind: "no_answer" };
    case "network_error":
      return error.outcomeUnknown ? { kind: "no_answer" } : { kind: "not_sent" };
    default:
      return undefined;
  }
}
