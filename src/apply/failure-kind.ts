// What a failed POST proves, in one table: whether the service refused it before processing, answered
// it (so nothing of it can commit later), or may still be processing it. create-config.ts acts on it,
// by the rule (and its reasons) at its top. A 503 with Retry-After counts as refused, as client-go
// reads it: how the service and well-behaved proxies shed load.

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
 * `refused`: not processed. `answered`: the service is done with it. `in_flight`: it may still
 * commit. `unreadable`: answered with something that is not a record. `rejected`: a 4xx other than
 * 429, not made. What follows from each is create-config.ts's rule.
 */
export type PostFailureKind = "refused" | "answered" | "in_flight" | "unreadable" | "rejected";

// Answered by a proxy in front of the service, which may have forwarded the request and given up
// on it while the service still works on it.
const PROXY_STATUSES: ReadonlySet<number> = new Set([502, 504]);

/**
 * What `failure` proves about the POST. `fiveXxInFlight`:
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
