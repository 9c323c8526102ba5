// What a failed attempt of a write proves, in one table: whether the service refused it before
// processing, answered it (so nothing of it can commit later), or may still be processing it. The
// retry loop notes an update or delete that may still land late by it; the error says by it whether
// a write's outcome is unknown; apply's create rule (src/apply/create-config.ts) acts on it for a
// POST. A 503 with Retry-After counts as refused, as client-go reads it: how the service and
// well-behaved proxies shed load.

import { type AttemptResponse, headerValue, TransportFailure } from "../http/transport.js";
import { isRequestError, isServiceError } from "./service-error.js";
import { isServiceEnvelope } from "./validate-response.js";

/** What the client knows of a failed attempt. */
export type AttemptFailure =
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
      /** The answer carried a Retry-After. */
      retryAfter: boolean;
    }
  /** A 2xx whose body cannot be read, or a redirect: the service answered, but not with a record. */
  | { kind: "unreadable_answer" };

/**
 * `refused`: not processed. `answered`: the service is done with it. `in_flight`: it may still
 * commit. `unreadable`: answered with something that is not a record. `rejected`: a 4xx other than
 * 429, not made. What follows from each for a create is create-config.ts's rule.
 */
export type AttemptProof = "refused" | "answered" | "in_flight" | "unreadable" | "rejected";

/** `fiveXxInFlight`: every 5xx is taken for in flight, whatever its body (`--treat-5xx-as-in-flight`). */
export interface ProofRules {
  fiveXxInFlight: boolean;
}

/**
 * What `failure` proves about the write. `fiveXxInFlight`: for a proxy that imitates the service's
 * envelope, every 5xx may still commit.
 */
export function proofOf(failure: AttemptFailure, rules: ProofRules): AttemptProof {
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
      // 502 and 504 are a proxy's in front of the service, which may have forwarded the request and
      // given up on it while the service still works on it.
      if (rules.fiveXxInFlight || status === 502 || status === 504) return "in_flight";
      if (status === 503 && failure.retryAfter) return "refused";
      return failure.serviceEnvelope ? "answered" : "in_flight";
    }
  }
}

/** What one attempt that was not a 2xx says of itself: an answer, or no answer. */
export function attemptFailureOf(attempt: AttemptResponse | TransportFailure): AttemptFailure {
  if (attempt instanceof TransportFailure) return attempt.sent ? { kind: "no_answer" } : { kind: "not_sent" };
  if (attempt.status >= 300 && attempt.status < 400) return { kind: "unreadable_answer" };
  return {
    kind: "status",
    status: attempt.status,
    serviceEnvelope: isServiceEnvelope(attempt.body),
    retryAfter: headerValue(attempt.headers["retry-after"]) !== undefined,
  };
}

/** Whether a failed attempt of a write may still be applied by the service after it. */
export function mayStillCommit(attempt: AttemptResponse | TransportFailure, rules: ProofRules): boolean {
  return proofOf(attemptFailureOf(attempt), rules) === "in_flight";
}

/**
 * The facts of a failed write as the client reported them; undefined for an error that is not a
 * failed request (a bug, an abort: the caller handles those).
 */
export function attemptFailureOfError(error: unknown): AttemptFailure | undefined {
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
