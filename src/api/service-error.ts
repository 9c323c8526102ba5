// ServiceError: a request that failed, an answer that cannot be used, or a write whose outcome is
// unknown. No error keeps request headers; what the server sent is redacted at the output.

import { STATUS_CODES } from "node:http";
import { describeCode, type ErrorEntry, EXIT_ERROR, type FactsOf, PcsyncError } from "../errors.js";
import { formatBytes } from "../format-bytes.js";
import { neutraliseInline } from "../neutralise-server-text.js";
import { plural } from "../plural.js";
import type { SecretRegistry } from "../redact.js";
import type { ServiceErrorBody } from "../wire-types.js";

export interface FailedRequest {
  method: string;
  /** Without the query string. */
  path: string;
  /** The error's inspect and JSON redact them (see PcsyncError). */
  secrets?: SecretRegistry | undefined;
}

interface Tries {
  attempts: number;
  /** A write may have happened although it failed (a drop after sending, a timeout, a 502/503/504). */
  outcomeUnknown: boolean;
  hint?: string | undefined;
  /** What is known since (apply's re-read found a create not made): added to the message. */
  settled?: string | undefined;
}

type Sent<Facts> = FailedRequest & Tries & Facts;

export type TimeoutPhase = "connect" | "headers" | "body";

/** Every code of a ServiceError ends the run with EXIT_ERROR. */
function entryOf<Kind extends "request" | "response" | "outcome">(kind: Kind) {
  return <Facts>(message: (facts: Facts) => string): ErrorEntry<Facts> & { kind: Kind } => ({
    kind,
    exit: EXIT_ERROR,
    message,
  });
}
const request = entryOf("request");
const response = entryOf("response");
const outcome = entryOf("outcome");

const SERVICE_CODES = {
  // -- A request that was sent (or tried) and failed
  /** `detail`: the error body on one line, or the status's name. */
  api_error: request(
    (
      f: Sent<{
        status: number;
        detail: string;
        serviceError?: ServiceErrorBody | undefined;
        /** The body is the service's own envelope (see attempt-proof.ts). */
        serviceEnvelope?: boolean | undefined;
        retryAfterMs?: number | undefined;
      }>,
    ) =>
      `${f.status} ${f.method} ${f.path}: ${f.detail}${f.attempts > 1 ? ` (gave up after ${f.attempts} attempts)` : ""}`,
  ),
  network_error: request(
    (
      f: Sent<{
        origin: string;
        /** e.g. `ECONNREFUSED`; `proxy_407` for a proxy's refusal. */
        reason: string;
        description: string;
        /** In the user's terms (a proxy, TLS, DNS), instead of the generic line. */
        explanation?: string | undefined;
      }>,
    ) =>
      f.explanation !== undefined
        ? `${f.method} ${f.path}: ${f.explanation}`
        : f.outcomeUnknown
          ? `${f.method} ${f.path}: connection to ${f.origin} lost (${f.description}) after ${plural(f.attempts, "attempt")}; the request may or may not have been processed`
          : `${f.method} ${f.path}: could not reach ${f.origin} (${f.description}) after ${plural(f.attempts, "attempt")}; check the base URL and that the service is reachable`,
  ),
  timeout: request(
    (f: Sent<{ phase: TimeoutPhase; timeoutMs: number }>) =>
      `${f.method} ${f.path}: ${{ connect: "could not connect", headers: "no response", body: "response body not complete" }[f.phase]} within ${f.timeoutMs} ms, after ${plural(f.attempts, "attempt")}`,
  ),
  /** Redirects are never followed, so the key goes nowhere but the base URL. */
  redirect_not_followed: request(
    (
      f: Sent<{
        status: number;
        /** Origin and path of the Location header (no query string). */
        location: string | undefined;
        base: string;
      }>,
    ) =>
      `${f.status} ${f.method} ${f.path}: the service redirected ${f.location === undefined ? "without a Location" : `to ${f.location}`}; pcsync does not follow redirects (the API key is only sent to ${f.base}); check the base URL, and use the redirect's target as the base URL if it is the service's real address`,
  ),
  response_headers_too_large: request(
    (f: Sent<{ limitBytes: number }>) =>
      `${f.method} ${f.path}: the response headers are larger than the ${formatBytes(f.limitBytes)} limit, so the answer was not read; is the base URL that of the Plugin Configuration Service, and is any proxy in front of it working?`,
  ),
  /** The run was interrupted before this request was sent (again): `attempts` counts those that went. */
  request_aborted: request(
    (f: Sent<object>) =>
      `${f.method} ${f.path}: ${
        f.attempts === 0
          ? "not sent"
          : `not sent again after ${plural(f.attempts, "attempt")}${f.outcomeUnknown ? " whose outcome is unknown" : ""}`
      }: the run was interrupted`,
  ),
  /** Not sent: an earlier answer throttled the key for longer than the client waits. */
  request_throttled: request(
    (f: Sent<{ until: string }>) =>
      `${f.method} ${f.path}: not sent: the service throttled this API key until ${f.until}, longer than pcsync waits (its hourly rate limit spent?); run again after then`,
  ),
  // -- An answer that cannot be used
  /** Never retried. */
  response_too_large: response((f: FailedRequest & { limitBytes: number; encoding?: string | undefined }) =>
    f.encoding === undefined
      ? `${f.method} ${f.path}: the response is larger than the ${formatBytes(f.limitBytes)} limit; ask for smaller pages or raise maxResponseBytes`
      : `${f.method} ${f.path}: the ${f.encoding}-encoded response inflates to more than the ${formatBytes(f.limitBytes)} limit; reading stopped there (no page of this service is that large: is the base URL that of the Plugin Configuration Service?)`,
  ),
  malformed_response: response(
    ({ method, path, problem }: FailedRequest & { problem: string }) =>
      `${method} ${path}: malformed response: ${problem}; is the base URL that of the Plugin Configuration Service?`,
  ),
  foreign_next_link: response(
    ({ method, path, link, base }: FailedRequest & { link: string; base: string }) =>
      `${method} ${path}: the next-page link points to ${link}, outside ${base}; refusing to follow it (the API key is only sent to the base URL)`,
  ),
  pagination_loop: response(
    ({ method, path, reason }: FailedRequest & { reason: string }) =>
      `${method} ${path}: pagination does not end (${reason}); refusing to read further`,
  ),
  /** Following it would read another list's records as this one's. */
  next_link_off_collection: response(
    ({ method, path, link, reason }: FailedRequest & { link: string; reason: string }) =>
      `${method} ${path}: the next-page link ${link} is not the next page of this list (${reason}); refusing to follow it, since its records would be taken for this list's. The service, or a proxy in front of it, rewrites its links: report it to whoever runs it`,
  ),
  /** Past the records or the time bound (list-walk.ts); `bound` names the option that raises it. */
  list_too_long: response(
    ({ method, path, reason, bound }: FailedRequest & { reason: string; bound: string }) =>
      `${method} ${path}: ${reason}; refusing to read further. If the list really is that long or the service that slow, raise ${bound}; otherwise the service, or a proxy in front of it, is answering wrongly`,
  ),
  list_changed_during_read: response(
    ({ method, path, reads, problem }: FailedRequest & { reads: number; problem: string }) =>
      `${method} ${path}: the service's list changed while it was being read, on ${plural(reads, "read")} in a row (last: ${problem}), so pcsync has no consistent copy of it and uses none; run pcsync again once nothing else is changing these records (another pcsync run, a deploy, someone in the service's UI)`,
  ),
  // -- A write that may or may not have happened, and is not sent again
  /** Never repeated: running a job twice may do harm. */
  job_outcome_unknown: outcome(
    ({ failure }: { failure: string }) =>
      `${failure}. The job may or may not have run; it was not retried. Check the config's logs before running it again.`,
  ),
  /**
   * The family could not be re-read to find out; a read that starts at or after `conclusiveAfter`
   * (the client's clock) without the record proves it was not made.
   */
  create_outcome_unknown: outcome(
    ({ failure, why }: { failure: string; why: string; conclusiveAfter?: number | undefined }) =>
      `${failure}. The record may or may not have been created: ${why}. Run \`pcsync plan\` once the service answers to see whether it exists.`,
  ),
} satisfies Record<string, ErrorEntry<never> & { kind: "request" | "response" | "outcome" }>;

export type ServiceErrorCode = keyof typeof SERVICE_CODES;
/** What an error of `code` knows besides the request. */
export type ServiceFacts<Code extends ServiceErrorCode> = Omit<
  FactsOf<typeof SERVICE_CODES, Code>,
  keyof FailedRequest
>;

export type RequestErrorCode = {
  [Code in ServiceErrorCode]: (typeof SERVICE_CODES)[Code]["kind"] extends "request" ? Code : never;
}[ServiceErrorCode];

export class ServiceError<Code extends ServiceErrorCode = ServiceErrorCode> extends PcsyncError {
  declare readonly code: Code;
  readonly method: string;
  readonly path: string;
  /** A request code's. */
  readonly attempts: number | undefined;
  /** See Tries (always, for an outcome code). */
  readonly outcomeUnknown: boolean;
  /** `api_error`, `redirect_not_followed`. */
  readonly status: number | undefined;
  readonly serviceError: ServiceErrorBody | undefined;
  readonly facts: ServiceFacts<Code>;

  constructor(code: Code, request: FailedRequest, facts: ServiceFacts<Code>) {
    const known = facts as unknown as Partial<Tries> & {
      status?: number;
      serviceError?: ServiceErrorBody | undefined;
    };
    const described = describeCode(SERVICE_CODES, code, {
      ...facts,
      method: request.method,
      path: request.path,
    } as unknown as FactsOf<typeof SERVICE_CODES, Code>);
    // A request code's hint is a fact of the request (the client's, or the one it was settled with).
    const message =
      known.settled === undefined ? described.message : `${described.message}; ${known.settled}`;
    super(code, { ...described, message, hint: described.hint ?? known.hint }, { secrets: request.secrets });
    this.method = request.method;
    this.path = request.path;
    this.attempts = known.attempts;
    this.outcomeUnknown = known.outcomeUnknown ?? SERVICE_CODES[code].kind === "outcome";
    this.status = known.status;
    this.serviceError = known.serviceError;
    this.facts = facts;
  }
}

export function isServiceError<Code extends ServiceErrorCode>(
  error: unknown,
  ...codes: Code[]
): error is ServiceError<Code> {
  return error instanceof ServiceError && (codes as readonly string[]).includes(error.code);
}

/** Of one of `codes` when given. */
export function isRequestError<Code extends RequestErrorCode = RequestErrorCode>(
  error: unknown,
  ...codes: Code[]
): error is ServiceError<Code> & { attempts: number } {
  return (
    error instanceof ServiceError &&
    SERVICE_CODES[error.code as ServiceErrorCode].kind === "request" &&
    (codes.length === 0 || (codes as readonly string[]).includes(error.code))
  );
}

/** The service's non-2xx answer, of one of `statuses` when given. */
export function isApiError(
  error: unknown,
  ...statuses: number[]
): error is ServiceError<"api_error"> & { status: number; attempts: number } {
  return (
    isRequestError(error, "api_error") &&
    error.status !== undefined &&
    (statuses.length === 0 || statuses.includes(error.status))
  );
}

// A 401 has none: where the key comes from is the caller's to say (the CLI names its variable and flag).
const STATUS_HINTS: Readonly<Record<number, string>> = {
  403: "The API key lacks the scope or the project access named above; use a key that has it.",
  429: "The service is throttling this key; wait a little and try again.",
};

export function apiError(
  request: FailedRequest,
  details: Omit<ServiceFacts<"api_error">, "detail" | "outcomeUnknown"> & {
    outcomeUnknown?: boolean;
    /** When the body is not the service's error shape (a proxy's page, an empty body). */
    fallbackDetail?: string | undefined;
  },
): ServiceError<"api_error"> {
  // On one line, every character visible: a line break could start a line a CI runner reads as a
  // command (`::error::`) or that looks like pcsync's own.
  const serviceError = details.serviceError && {
    type: neutraliseInline(details.serviceError.type),
    code: neutraliseInline(details.serviceError.code),
    detail: neutraliseInline(details.serviceError.detail),
    attr: details.serviceError.attr === null ? null : neutraliseInline(details.serviceError.attr),
  };
  const detail = serviceError
    ? `${serviceError.attr ? `${serviceError.attr}: ` : ""}${serviceError.detail}`
    : details.fallbackDetail || STATUS_CODES[details.status] || "unexpected status";
  return new ServiceError("api_error", request, {
    status: details.status,
    detail,
    serviceError,
    ...(details.serviceEnvelope === undefined ? {} : { serviceEnvelope: details.serviceEnvelope }),
    ...(details.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
    attempts: details.attempts,
    outcomeUnknown: details.outcomeUnknown ?? false,
    hint: details.hint ?? STATUS_HINTS[details.status],
  });
}
