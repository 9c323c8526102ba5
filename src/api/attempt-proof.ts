// What a failed attempt of a write proves: refused, answered, or perhaps still being processed.
// A 503 with Retry-After counts as refused, as client-go reads it: how services shed load.

import { type AttemptResponse, headerValue, TransportFailure } from "../http/transport.js";
import { isRequestError, isServiceError } from "./service-error.js";
import { isServiceEnvelope } from "./validate-response.js";

export type AttemptFailure =
  /** Connection refused, DNS: not processed. */
  | { kind: "not_sent" }
  /** A timeout, a reset after sending, headers too large to read. */
  | { kind: "no_answer" }
  /** A non-2xx, non-3xx status. */
  | {
      kind: "status";
      status: number;
      /** A JSON object with string type, code, detail. */
      serviceEnvelope: boolean;
      retryAfter: boolean;
    }
  /** A 2xx whose body cannot be read, or a redirect: answered, but not with a record. */
  | { kind: "unreadable_answer" };

/**
 * `answered`: the service is done with it. `in_flight`: it may still commit. `rejected`: a 4xx
 * other than 429, not made. What follows for a create is create-config.ts's rule.
 */
export type AttemptProof = "refused" | "answered" | "in_flight" | "unreadable" | "rejected";

/** `fiveXxInFlight` (`--treat-5xx-as-in-flight`): for a proxy that imitates the service's envelope. */
export interface ProofRules {
  fiveXxInFlight: boolean;
}

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

export function mayStillCommit(attempt: AttemptResponse | TransportFailure, rules: ProofRules): boolean {
  return proofOf(attemptFailureOf(attempt), rules) === "in_flight";
}

/** Undefined for an error that is not a failed request (a bug, an abort: the caller handles those). */
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
