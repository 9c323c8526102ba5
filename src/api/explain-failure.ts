// A connection failure in the user's terms: which hop failed (the proxy or the service) and what
// to check, instead of a system error code or OpenSSL's two-line message.

import type { BaseUrl } from "./base-url.js";
import type { ProxyRoute } from "./proxy.js";
import { plural } from "./service-error.js";
import type { TransportFailure } from "./transport.js";

export interface FailureExplanation {
  /** Replaces the generic "could not reach" line when set. */
  explanation?: string;
  /** A likely cause the message cannot be sure of, printed under it. */
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
