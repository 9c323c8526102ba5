// A failed request as the ServiceError a user reads: a non-2xx with a hint where the status misleads,
// or a connection failure in the user's terms (which hop, what to check), not a system code.

import { maxHeaderSize } from "node:http";
import type { ProxyRoute } from "../http/proxy.js";
import { type AttemptResponse, headerValue, type TransportFailure } from "../http/transport.js";
import { plural } from "../plural.js";
import type { SecretRegistry } from "../redact.js";
import { type BaseUrl, fromWhere } from "./base-url.js";
import { type LastAttempt, parseRetryAfter, throttleWaitMs } from "./retry.js";
import { apiError, type FailedRequest, ServiceError } from "./service-error.js";
import { isServiceEnvelope, readServiceError } from "./validate-response.js";

export interface FailureContext {
  base: BaseUrl;
  proxy: ProxyRoute | undefined;
  secrets: SecretRegistry;
  bounds: { headersTimeoutMs: number; bodyTimeoutMs: number; maxResponseBytes: number };
  now: number;
  /** The base URL reaches the API. */
  hasSucceeded: boolean;
}

export function failureError(
  request: FailedRequest,
  url: URL,
  last: LastAttempt,
  context: FailureContext,
): Error {
  const { attempts, outcomeUnknown } = last;
  const writes = request.method !== "GET";
  if (last.failure !== undefined) return transportError(request, last, context);
  const { response } = last;
  const { status } = response;
  if (status >= 300 && status < 400) {
    const location = describeLocation(headerValue(response.headers.location), url);
    const facts = { status, location, base: context.base.display, attempts, outcomeUnknown: writes };
    return new ServiceError("redirect_not_followed", request, facts);
  }
  return apiError(request, {
    status,
    serviceError: readServiceError(response.body),
    serviceEnvelope: isServiceEnvelope(response.body),
    retryAfterMs: parseRetryAfter(headerValue(response.headers["retry-after"]), context.now),
    fallbackDetail: fallbackDetail(response, context.secrets),
    hint: hintFor(status, response, context),
    attempts,
    outcomeUnknown,
  });
}

/** A 429's stated wait beyond which "wait a little" misleads: the service named an hour's limit. */
const LONG_THROTTLE_MS = 120_000;

function hintFor(status: number, response: AttemptResponse, { base, hasSucceeded, now }: FailureContext) {
  if (status === 429) {
    const waitMs = throttleWaitMs(response, now);
    if (waitMs !== undefined && waitMs > LONG_THROTTLE_MS)
      return `The service throttled this key until ${new Date(now + waitMs).toISOString()} (its hourly rate limit spent?): run again after then.`;
  }
  // nginx and others answer plain http sent to their TLS port with a 400 (or 497) saying so.
  if (
    (status === 400 || status === 497) &&
    /plain HTTP request was sent to HTTPS port/i.test(response.body.toString("utf8"))
  ) {
    const host = new URL(base.origin).host;
    return `the server at ${host} speaks https on this port: the base URL should be https://${host}${base.prefix}`;
  }
  // The service itself said the project is not there: the base URL reached it, the id is wrong.
  if (status === 404 && /^project not found\.?$/i.test(readServiceError(response.body)?.detail?.trim() ?? ""))
    return "the service has no project of this id that the API key can see: check the project id (`pcsync export --all` writes every project the key can see)";
  // A wrong path in the base URL makes every request a 404: before any answer came back, say so.
  if (status === 404 && !hasSucceeded) {
    return `this was the first answer from ${base.display}${fromWhere(base.source)}: if every request gets 404, check the base URL's path. It is the service's root (with the path prefix it is mounted under, if any); pcsync adds /api/projects/... itself.`;
  }
  return undefined;
}

/** One line of a non-JSON error body (a proxy's text), or nothing for HTML. */
function fallbackDetail(response: AttemptResponse, secrets: SecretRegistry): string | undefined {
  const contentType = headerValue(response.headers["content-type"]) ?? "";
  if (contentType.includes("html")) return undefined;
  const text = response.body.toString("utf8").replace(/\s+/g, " ").trim();
  if (text === "") return undefined;
  const excerpt = secrets.excerpt(text, 200);
  return excerpt.length < text.length ? `${excerpt}...` : text;
}

/** Origin and path only: the query string may carry anything, even a token. */
function describeLocation(location: string | undefined, from: URL): string | undefined {
  if (location === undefined) return undefined;
  if (!URL.canParse(location, from.href)) return JSON.stringify(location.slice(0, 80));
  const target = new URL(location, from);
  return `${target.origin}${target.pathname}`;
}

function transportError(
  request: FailedRequest,
  last: LastAttempt & { failure: TransportFailure },
  context: FailureContext,
) {
  const { failure, attempts, outcomeUnknown } = last;
  const { bounds } = context;
  if (failure.kind === "too_large") {
    const { encoding } = failure;
    return new ServiceError("response_too_large", request, { limitBytes: bounds.maxResponseBytes, encoding });
  }
  if (failure.kind === "headers_too_large") {
    const facts = { limitBytes: maxHeaderSize, attempts, outcomeUnknown: request.method !== "GET" };
    return new ServiceError("response_headers_too_large", request, facts);
  }
  if (failure.kind === "undecodable")
    return new ServiceError("malformed_response", request, { problem: failure.message });
  if (failure.kind === "timeout") {
    const timeoutMs = failure.phase === "body" ? bounds.bodyTimeoutMs : bounds.headersTimeoutMs;
    return new ServiceError("timeout", request, {
      phase: failure.phase,
      timeoutMs,
      attempts,
      outcomeUnknown,
    });
  }
  return new ServiceError("network_error", request, {
    origin: context.base.origin,
    reason: failure.reason,
    description: failure.message,
    attempts,
    outcomeUnknown,
    ...explainFailure(failure, { base: context.base, proxy: context.proxy, attempts }),
  });
}

interface FailureExplanation {
  /** Replaces the generic "could not reach" line. */
  explanation?: string;
  /** A likely cause the message cannot be sure of. */
  hint?: string;
}

// The answers of a server that does not speak TLS, read as a TLS record.
const NOT_TLS_CODES = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG"]);
const NOT_TLS_TEXT = /wrong version number|packet length too long/i;
const UNTRUSTED_CERTIFICATE = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_CRL",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REJECTED",
]);
const PRIVATE_CA =
  "if the service, or a proxy that inspects TLS, uses a private certificate authority, set NODE_EXTRA_CA_CERTS to a PEM file holding that CA's certificate";

export function explainFailure(
  failure: TransportFailure,
  context: { base: BaseUrl; proxy: ProxyRoute | undefined; attempts: number },
): FailureExplanation {
  const { base, proxy, attempts } = context;
  const { reason, message: description } = failure;
  const { host, hostname } = new URL(base.origin);
  const through = proxy === undefined ? "" : ` (through the proxy ${proxy.display})`;
  const certificate = `the TLS certificate of ${base.origin}${through}`;
  // A host that does not resolve may be one only the network's proxy can reach.
  const proxyHint = base.origin.startsWith("https:")
    ? " (if this network reaches the service only through a proxy, set HTTPS_PROXY)"
    : "";
  const explained = (explanation: string) => ({ explanation });
  if (failure.kind === "proxy" && proxy !== undefined)
    return explainProxyFailure(failure, proxy, host, attempts);
  if (NOT_TLS_CODES.has(reason) || (reason === "EPROTO" && NOT_TLS_TEXT.test(description)))
    return explained(
      `the server at ${base.origin}${through} does not speak TLS: is the base URL http://${host}${base.prefix}?`,
    );
  if (UNTRUSTED_CERTIFICATE.has(reason))
    return explained(`${certificate} is not trusted (${description}): ${PRIVATE_CA}`);
  if (reason === "CERT_HAS_EXPIRED" || reason === "CERT_NOT_YET_VALID")
    return explained(
      `${certificate} is not valid now (${description}); check the server's certificate and this machine's clock`,
    );
  if (reason === "ERR_TLS_CERT_ALTNAME_INVALID")
    return explained(
      `${certificate} is for another host name (${description}); check the base URL's host name`,
    );
  if (reason === "ENOTFOUND")
    return explained(
      `the host name ${hostname} does not resolve (DNS lookup failed); check the base URL for typos, and this machine's DNS${proxyHint}`,
    );
  if (reason === "EAI_AGAIN")
    return explained(
      `the DNS lookup of ${hostname} failed for now (EAI_AGAIN), after ${plural(attempts, "attempt")}; check this machine's network and DNS${proxyHint}`,
    );
  // A server that speaks only TLS closes a plain-http connection without a word (or answers 400).
  if (base.origin.startsWith("http:") && failure.kind === "connection")
    return {
      hint: `if the server at ${host} speaks https, the base URL should be https://${host}${base.prefix}`,
    };
  return {};
}

function explainProxyFailure(
  failure: TransportFailure,
  proxy: ProxyRoute,
  host: string,
  attempts: number,
): FailureExplanation {
  const named = `the proxy ${proxy.display} (from ${proxy.variable})`;
  const status = failure.proxyStatus;
  if (status === 407) {
    const credentials =
      proxy.url.username === ""
        ? `asks for credentials: put them in ${proxy.variable} as http://USER:PASSWORD@HOST:PORT (URL-encoded)`
        : `refused the user name and password in ${proxy.variable}: check them (URL-encoded)`;
    return { explanation: `${named} ${credentials} (407 Proxy Authentication Required)` };
  }
  const explanation =
    status === 403
      ? `${named} refused to open a tunnel to ${host} (403 Forbidden): ask its administrators to allow ${host}, or list the host in NO_PROXY if it is reachable without the proxy`
      : status !== undefined && status >= 500
        ? `${named} could not connect to ${host} (${failure.message}), after ${plural(attempts, "attempt")}: check the base URL's host name and port, and that the service is up`
        : status !== undefined
          ? `${named} refused to open a tunnel to ${host} (${failure.message})`
          : `could not reach ${named}: ${failure.message}, after ${plural(attempts, "attempt")}; check ${proxy.variable}, or list ${host} in NO_PROXY if the service is reachable without the proxy`;
  return { explanation };
}
