// The service's error responses: a constructor per row of the error table, so handlers never spell
// a body by hand.

import { plural } from "../plural.js";
import type { ServiceErrorBody } from "../wire-types.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: ServiceErrorBody,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${status} ${body.code}: ${body.detail}`);
    this.name = "HttpError";
  }
}

// The error `type` follows from the status.
const TYPE_OF_STATUS: Readonly<Record<number, string>> = {
  400: "validation_error",
  401: "authentication_error",
  403: "authentication_error",
  429: "throttled_error",
  500: "server_error",
  503: "server_error",
};

function httpError(status: number, code: string, detail: string, headers = {}, attr: string | null = null) {
  const type = TYPE_OF_STATUS[status] ?? "invalid_request";
  return new HttpError(status, { type, code, detail, attr }, headers);
}

const BEARER = { "www-authenticate": "Bearer" };
const retryAfter = (seconds: number | undefined) =>
  seconds === undefined ? {} : { "retry-after": String(seconds) };

export const validationError = (code: string, detail: string, attr: string | null) =>
  httpError(400, code, detail, {}, attr);
export const requiredField = (attr: string) => validationError("required", "This field is required.", attr);
export const parseError = (detail: string) => httpError(400, "parse_error", detail);
export const notAuthenticated = () =>
  httpError(401, "not_authenticated", "Authentication credentials were not provided.", BEARER);
export const authenticationFailed = () =>
  httpError(
    401,
    "authentication_failed",
    "Personal API key found in request Authorization header is invalid.",
    BEARER,
  );
export const permissionDenied = (detail: string) => httpError(403, "permission_denied", detail);
export const notFound = (detail = "Not found.") => httpError(404, "not_found", detail);
export const projectNotFound = () => notFound("Project not found.");
export const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  httpError(405, "method_not_allowed", `Method "${method}" not allowed.`, { allow: allowed.join(", ") });
export const payloadTooLarge = (limitBytes: number) =>
  httpError(413, "payload_too_large", `Request body is larger than the limit of ${limitBytes} bytes.`);
export const unsupportedMediaType = (contentType: string) =>
  httpError(415, "unsupported_media_type", `Unsupported media type "${contentType}" in request.`);
/** posthog-2024's 429s carry no Retry-After. */
export const throttled = (seconds: number, retryAfterHeader: boolean) =>
  httpError(
    429,
    "throttled",
    `Request was throttled. Expected available in ${plural(seconds, "second")}.`,
    retryAfter(retryAfterHeader ? seconds : undefined),
  );
export const serverError = () => httpError(500, "error", "A server error occurred.");
export const serviceUnavailable = (retryAfterSeconds?: number) =>
  httpError(
    503,
    "service_unavailable",
    "Service temporarily unavailable, try again later.",
    retryAfter(retryAfterSeconds),
  );
