// The errors the API client throws: one class per way a request can fail, each with a stable
// `code`. No error keeps request headers. What the server sent (which may quote the key) is kept
// as sent, since code compares it; it is redacted where output leaves the process, and
// PcsyncError redacts `util.inspect` and JSON of errors.

import { STATUS_CODES } from "node:http";
import { PcsyncError } from "../errors.js";
import { formatBytes } from "../format-bytes.js";
import { neutraliseInline } from "../server-text.js";
import type { ServiceErrorBody } from "../wire-types.js";

/** What an error needs to know about the request that failed. */
export interface FailedRequest {
  method: string;
  /** The URL path (without query string) as sent. */
  path: string;
}

/** A request that was sent (or tried) and failed; the base of the HTTP, network and timeout errors. */
export abstract class RequestFailedError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  /** How many times the request was sent before giving up. */
  readonly attempts: number;
  /**
   * True when the last attempt may have been processed by the service (the connection dropped after
   * sending, a timeout, a 502/503/504): a write may have happened although it failed.
   */
  readonly outcomeUnknown: boolean;

  protected constructor(
    code: string,
    request: FailedRequest,
    message: string,
    details: { attempts: number; outcomeUnknown: boolean; hint?: string | undefined },
  ) {
    super(code, message, { hint: details.hint });
    this.method = request.method;
    this.path = request.path;
    this.attempts = details.attempts;
    this.outcomeUnknown = details.outcomeUnknown;
  }
}

/** Any non-2xx answer of the service. */
export class ApiError extends RequestFailedError {
  readonly status: number;
  /** The service's `{type, code, detail, attr}` body, when it sent one. */
  readonly serviceError: ServiceErrorBody | undefined;

  constructor(
    request: FailedRequest,
    details: {
      status: number;
      serviceError?: ServiceErrorBody | undefined;
      /** Used when the body is not the service's error shape (a proxy's HTML page, an empty body). */
      fallbackDetail?: string | undefined;
      attempts: number;
      outcomeUnknown?: boolean;
      /** What to check, when the answer says more than its status (a TLS port answering plain http). */
      hint?: string | undefined;
    },
  ) {
    // The service's text is shown on one line: a line break in it could start a line that a CI
    // runner reads as a command (`::error::`, `::add-mask::`) or that looks like pcsync's own.
    const serviceError = details.serviceError && {
      type: oneLine(details.serviceError.type),
      code: oneLine(details.serviceError.code),
      detail: oneLine(details.serviceError.detail),
      attr: details.serviceError.attr === null ? null : oneLine(details.serviceError.attr),
    };
    const detail = serviceError
      ? `${serviceError.attr ? `${serviceError.attr}: ` : ""}${serviceError.detail}`
      : details.fallbackDetail || STATUS_CODES[details.status] || "unexpected status";
    const retried = details.attempts > 1 ? ` (gave up after ${details.attempts} attempts)` : "";
    super("api_error", request, `${details.status} ${request.method} ${request.path}: ${detail}${retried}`, {
      attempts: details.attempts,
      outcomeUnknown: details.outcomeUnknown ?? false,
      hint: details.hint ?? STATUS_HINTS[details.status],
    });
    this.status = details.status;
    this.serviceError = serviceError;
  }
}

/**
 * What a user can do about a status the service's text may not explain. A 401 has none here: where
 * the key comes from is the caller's to say (the CLI names its variable and flag).
 */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  403: "The API key lacks the scope or the project access named above; use a key that has it.",
  429: "The service is throttling this key; wait a little and try again.",
};

/** The connection failed (refused, reset, DNS, TLS, a proxy), after the retries allowed. */
export class NetworkError extends RequestFailedError {
  /** The system or undici error code, e.g. `ECONNREFUSED`; `proxy_407` for a proxy's refusal. */
  readonly reason: string;

  constructor(
    request: FailedRequest,
    details: {
      origin: string;
      reason: string;
      description: string;
      attempts: number;
      outcomeUnknown: boolean;
      /** Says what happened in the user's terms (a proxy, TLS, DNS), instead of the generic line. */
      explanation?: string | undefined;
      hint?: string | undefined;
    },
  ) {
    const after = `after ${plural(details.attempts, "attempt")}`;
    const message =
      details.explanation !== undefined
        ? `${request.method} ${request.path}: ${details.explanation}`
        : details.outcomeUnknown
          ? `${request.method} ${request.path}: connection to ${details.origin} lost (${details.description}) ${after}; the request may or may not have been processed`
          : `${request.method} ${request.path}: could not reach ${details.origin} (${details.description}) ${after}; check the base URL and that the service is reachable`;
    super("network_error", request, message, details);
    this.reason = details.reason;
  }
}

/** No response, or no complete body, within the configured time. */
export class TimeoutError extends RequestFailedError {
  readonly timeoutMs: number;
  readonly phase: "connect" | "headers" | "body";

  constructor(
    request: FailedRequest,
    details: {
      phase: "connect" | "headers" | "body";
      timeoutMs: number;
      attempts: number;
      outcomeUnknown: boolean;
    },
  ) {
    const what = {
      connect: "could not connect",
      headers: "no response",
      body: "response body not complete",
    }[details.phase];
    super(
      "timeout",
      request,
      `${request.method} ${request.path}: ${what} within ${details.timeoutMs} ms, after ${plural(details.attempts, "attempt")}`,
      details,
    );
    this.timeoutMs = details.timeoutMs;
    this.phase = details.phase;
  }
}

/** The response exceeded the client's memory bound; it is never retried. */
export class ResponseTooLargeError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  readonly limitBytes: number;

  constructor(request: FailedRequest, limitBytes: number) {
    super(
      "response_too_large",
      `${request.method} ${request.path}: the response is larger than the ${formatBytes(limitBytes)} limit; ask for smaller pages or raise maxResponseBytes`,
    );
    this.method = request.method;
    this.path = request.path;
    this.limitBytes = limitBytes;
  }
}

/** A 2xx response that is not JSON, or does not have the shape the client relies on. */
export class MalformedResponseError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  /** The first problem, e.g. `results[3].enabled: must be boolean`. */
  readonly problem: string;

  constructor(request: FailedRequest, problem: string) {
    super(
      "malformed_response",
      `${request.method} ${request.path}: malformed response: ${problem}; is the base URL that of the Plugin Configuration Service?`,
    );
    this.method = request.method;
    this.path = request.path;
    this.problem = problem;
  }
}

/** A `next` link off the base URL's origin or path prefix; the key is never sent there. */
export class ForeignNextLinkError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  /** Origin and path of the refused link (its query string is not kept). */
  readonly link: string;

  constructor(request: FailedRequest, link: string, base: string) {
    super(
      "foreign_next_link",
      `${request.method} ${request.path}: the next-page link points to ${link}, outside ${base}; refusing to follow it (the API key is only sent to the base URL)`,
    );
    this.method = request.method;
    this.path = request.path;
    this.link = link;
  }
}

/** Pagination that would not end: a repeated `next` link, or more pages than `count` allows. */
export class PaginationLoopError extends PcsyncError {
  readonly method: string;
  readonly path: string;

  constructor(request: FailedRequest, reason: string) {
    super(
      "pagination_loop",
      `${request.method} ${request.path}: pagination does not end (${reason}); refusing to read further`,
    );
    this.method = request.method;
    this.path = request.path;
  }
}

/**
 * A list longer than pcsync reads, or slower to read than it waits for: a count above the records
 * bound, or a read past the time bound. `bound` names the setting that raises it.
 */
export class ListTooLongError extends PcsyncError {
  readonly method: string;
  readonly path: string;

  constructor(request: FailedRequest, reason: string, bound: string) {
    super(
      "list_too_long",
      `${request.method} ${request.path}: ${reason}; refusing to read further. If the list really is that long or the service that slow, raise ${bound}; otherwise the service, or a proxy in front of it, is answering wrongly`,
    );
    this.method = request.method;
    this.path = request.path;
  }
}

/** Plain http to a host that is not this machine would expose the key. */
export class InsecureHttpError extends PcsyncError {
  constructor(host: string) {
    super(
      "insecure_http",
      `Refusing to send the API key over plain http to ${host}: use an https:// base URL, or pass --insecure-http if the network is trusted.`,
    );
  }
}

/** HTTPS_PROXY or HTTP_PROXY holds no usable proxy URL; its value may hold a password, so is not shown. */
export class InvalidProxyError extends PcsyncError {
  readonly variable: string;

  constructor(variable: string, reason: string) {
    super("invalid_proxy", `The proxy in ${variable} cannot be used: ${reason}.`);
    this.variable = variable;
  }
}

export class InvalidBaseUrlError extends PcsyncError {
  constructor(shown: string, reason: string) {
    super("invalid_base_url", `Invalid base URL ${shown}: ${reason}.`);
  }
}

/** A project id that could be turned into another path; refused before any request. */
export class InvalidProjectIdError extends PcsyncError {
  constructor(projectId: string, reason: string) {
    super("invalid_project_id", `Invalid project id ${JSON.stringify(projectId)}: ${reason}.`);
  }
}

export class InvalidConfigIdError extends PcsyncError {
  constructor(configId: unknown) {
    super("invalid_config_id", `Invalid config id ${String(configId)}: it must be a non-negative integer.`);
  }
}

/** An argument the service would reject or misread, refused before any request. */
export class InvalidRequestError extends PcsyncError {
  constructor(message: string) {
    super("invalid_request", message);
  }
}

/** Logs exist for plugin_configs only. */
export class LogsNotSupportedError extends PcsyncError {
  constructor(family: string) {
    super(
      "logs_not_supported",
      `The ${family} family has no logs endpoint; logs exist for plugin_configs only.`,
    );
  }
}

/** A job POST whose outcome is unknown is never repeated: running a job twice may do harm. */
export class JobOutcomeUnknownError extends PcsyncError {
  readonly method = "POST";
  readonly path: string;

  constructor(request: FailedRequest, cause: RequestFailedError) {
    super(
      "job_outcome_unknown",
      `${cause.message}. The job may or may not have run; it was not retried. Check the config's logs before running it again.`,
    );
    this.path = request.path;
  }
}

/** A create failed ambiguously and the family could not be re-read to find out whether it happened. */
export class CreateOutcomeUnknownError extends PcsyncError {
  readonly method = "POST";
  readonly path: string;

  /**
   * A read of the family that starts at or after this time (the client's clock) and does not show
   * the record proves it was not created; undefined when no such time is known.
   */
  readonly conclusiveAfter: number | undefined;

  /** `why`: why the outcome could not be settled, e.g. "re-reading the family to check failed (...)". */
  constructor(request: FailedRequest, createFailure: string, why: string, conclusiveAfter?: number) {
    super(
      "create_outcome_unknown",
      `${createFailure}. The record may or may not have been created: ${why}. Run \`pcsync plan\` once the service answers to see whether it exists.`,
    );
    this.path = request.path;
    this.conclusiveAfter = conclusiveAfter;
  }
}

/** A key that cannot go into an Authorization header as is; its value is never shown. */
export class InvalidApiKeyError extends PcsyncError {
  constructor(source: string, reason: string) {
    super("api_key_invalid", `The API key from ${source} ${reason}.`);
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/**
 * A `next` link on the base URL that is not the next page of the same list (another project,
 * family or record, other filters): following it would read another list's records as this one's.
 */
export class NextLinkOffCollectionError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  /** Path and query of the refused link. */
  readonly link: string;

  constructor(request: FailedRequest, link: string, reason: string) {
    const shownLink = link;
    super(
      "next_link_off_collection",
      `${request.method} ${request.path}: the next-page link ${shownLink} is not the next page of this list (${reason}); refusing to follow it, since its records would be taken for this list's. The service, or a proxy in front of it, rewrites its links: report it to whoever runs it`,
    );
    this.method = request.method;
    this.path = request.path;
    this.link = shownLink;
  }
}

/**
 * A list whose pages did not add up (count changed between pages, an id on two pages, fewer or
 * more records than announced) on every read allowed: no consistent copy of it could be read.
 */
export class ListChangedDuringReadError extends PcsyncError {
  readonly method: string;
  readonly path: string;
  readonly reads: number;
  /** What did not add up on the last read, e.g. `id 5049 is listed on pages 1 and 2`. */
  readonly problem: string;

  constructor(request: FailedRequest, reads: number, problem: string) {
    super(
      "list_changed_during_read",
      `${request.method} ${request.path}: the service's list changed while it was being read, on ${plural(reads, "read")} in a row (last: ${problem}), so pcsync has no consistent copy of it and uses none; run pcsync again once nothing else is changing these records (another pcsync run, a deploy, someone in the service's UI)`,
    );
    this.method = request.method;
    this.path = request.path;
    this.reads = reads;
    this.problem = problem;
  }
}

/** A 3xx answer: redirects are never followed, so the key goes nowhere but the base URL. */
export class RedirectNotFollowedError extends RequestFailedError {
  readonly status: number;
  /** Origin and path of the Location header (no query string), or undefined without one. */
  readonly location: string | undefined;

  constructor(
    request: FailedRequest,
    details: { status: number; location: string | undefined; base: string; attempts: number },
  ) {
    const where = details.location === undefined ? "without a Location" : `to ${details.location}`;
    super(
      "redirect_not_followed",
      request,
      `${details.status} ${request.method} ${request.path}: the service redirected ${where}; pcsync does not follow redirects (the API key is only sent to ${details.base}); check the base URL, and use the redirect's target as the base URL if it is the service's real address`,
      // A redirected write (a 303 after a POST) may have been processed before the redirect.
      { attempts: details.attempts, outcomeUnknown: request.method !== "GET" },
    );
    this.status = details.status;
    this.location = details.location === undefined ? undefined : details.location;
  }
}

/** Response headers beyond the HTTP parser's limit: not a Plugin Configuration Service answer. */
export class ResponseHeadersTooLargeError extends RequestFailedError {
  readonly limitBytes: number;

  constructor(request: FailedRequest, details: { limitBytes: number; attempts: number }) {
    super(
      "response_headers_too_large",
      request,
      `${request.method} ${request.path}: the response headers are larger than the ${formatBytes(details.limitBytes)} limit, so the answer was not read; is the base URL that of the Plugin Configuration Service, and is any proxy in front of it working?`,
      // The service may have processed a write whose answer could not be read.
      { attempts: details.attempts, outcomeUnknown: request.method !== "GET" },
    );
    this.limitBytes = details.limitBytes;
  }
}

/** A compressed body that inflates beyond the memory bound (a compression bomb, or a huge answer). */
export class InflatedResponseTooLargeError extends ResponseTooLargeError {
  readonly encoding: string;

  constructor(request: FailedRequest, limitBytes: number, encoding: string) {
    super(request, limitBytes);
    this.encoding = encoding;
    this.message = `${request.method} ${request.path}: the ${encoding}-encoded response inflates to more than the ${formatBytes(limitBytes)} limit; reading stopped there (no page of this service is that large: is the base URL that of the Plugin Configuration Service?)`;
  }
}

/**
 * The client's abort signal fired (apply was interrupted) before this request could be sent, or
 * sent again: `attempts` counts the attempts that did go out, and `outcomeUnknown` says whether
 * one of them may have been processed.
 */
export class RequestAbortedError extends RequestFailedError {
  /** `settled`: what is known of the earlier attempts, when the caller found out (a create re-read). */
  constructor(
    request: FailedRequest,
    details: { attempts: number; outcomeUnknown: boolean; settled?: string },
  ) {
    const when =
      details.attempts === 0
        ? "not sent"
        : `not sent again after ${plural(details.attempts, "attempt")}${details.outcomeUnknown ? " whose outcome is unknown" : ""}`;
    const settled = details.settled === undefined ? "" : `; ${details.settled}`;
    super(
      "request_aborted",
      request,
      `${request.method} ${request.path}: ${when}: the run was interrupted${settled}`,
      details,
    );
  }
}

/**
 * A create whose outcome was unknown, found not made by re-reading the family after its settle
 * window: a definitive failure, quoting the last attempt's error and how often it was sent.
 */
export class CreateNotMadeError extends RequestFailedError {
  constructor(failure: RequestFailedError, posts: number) {
    const settled =
      posts > 1
        ? `the create was sent ${posts} times, and re-reading the family after each settle window found no record made by it`
        : "re-reading the family after the settle window found no record made by it";
    super(failure.code, { method: failure.method, path: failure.path }, `${failure.message}; ${settled}`, {
      attempts: failure.attempts,
      outcomeUnknown: false,
      hint: failure.hint,
    });
  }
}

/** Text from the service on one line, every character visible (see server-text.ts). */
const oneLine = neutraliseInline;
