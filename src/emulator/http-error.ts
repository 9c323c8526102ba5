// The service's error responses: one class carrying status and the `{type, code, detail, attr}` body,
// plus a constructor per row of the error table so handlers never spell a body by hand.

import type { ServiceErrorBody } from "../wire-types.js";

export class HttpError extends Error {
  readonly status: number;
  readonly body: ServiceErrorBody;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, body: ServiceErrorBody, headers: Record<string, string> = {}) {
    super(`${status} ${body.code}: ${body.detail}`);
    this.name = "HttpError";
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export function validationError(code: string, detail: string, attr: string | null): HttpError {
  return new HttpError(400, { type: "validation_error", code, detail, attr });
}

export function requiredField(attr: string): HttpError {
  return validationError("required", "This field is required.", attr);
}

export function parseError(detail: string): HttpError {
  return new HttpError(400, { type: "validation_error", code: "parse_error", detail, attr: null });
}

export function notAuthenticated(): HttpError {
  return new HttpError(
    401,
    {
      type: "authentication_error",
      code: "not_authenticated",
      detail: "Authentication credentials were not provided.",
      attr: null,
    },
    { "www-authenticate": "Bearer" },
  );
}

export function authenticationFailed(): HttpError {
  return new HttpError(
    401,
    {
      type: "authentication_error",
      code: "authentication_failed",
      detail: "Personal API key found in request Authorization header is invalid.",
      attr: null,
    },
    { "www-authenticate": "Bearer" },
  );
}

export function permissionDenied(detail: string): HttpError {
  return new HttpError(403, { type: "authentication_error", code: "permission_denied", detail, attr: null });
}

export function notFound(detail = "Not found."): HttpError {
  return new HttpError(404, { type: "invalid_request", code: "not_found", detail, attr: null });
}

export function projectNotFound(): HttpError {
  return notFound("Project not found.");
}

export function methodNotAllowed(method: string, allowed: readonly string[]): HttpError {
  return new HttpError(
    405,
    {
      type: "invalid_request",
      code: "method_not_allowed",
      detail: `Method "${method}" not allowed.`,
      attr: null,
    },
    { allow: allowed.join(", ") },
  );
}

export function payloadTooLarge(limitBytes: number): HttpError {
  return new HttpError(413, {
    type: "invalid_request",
    code: "payload_too_large",
    detail: `Request body is larger than the limit of ${limitBytes} bytes.`,
    attr: null,
  });
}

export function unsupportedMediaType(contentType: string): HttpError {
  return new HttpError(415, {
    type: "invalid_request",
    code: "unsupported_media_type",
    detail: `Unsupported media type "${contentType}" in request.`,
    attr: null,
  });
}

/** `retryAfterHeader` is false for the posthog-2024 profile, whose 429s carry no Retry-After. */
export function throttled(waitSeconds: number, retryAfterHeader: boolean): HttpError {
  return new HttpError(
    429,
    {
      type: "throttled_error",
      code: "throttled",
      detail: `Request was throttled. Expected available in ${waitSeconds} second${waitSeconds === 1 ? "" : "s"}.`,
      attr: null,
    },
    retryAfterHeader ? { "retry-after": String(waitSeconds) } : {},
  );
}

export function serverError(): HttpError {
  return new HttpError(500, {
    type: "server_error",
    code: "error",
    detail: "A server error occurred.",
    attr: null,
  });
}

export function serviceUnavailable(retryAfterSeconds?: number): HttpError {
  return new HttpError(
    503,
    {
      type: "server_error",
      code: "service_unavailable",
      detail: "Service temporarily unavailable, try again later.",
      attr: null,
    },
    retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) },
  );
}
