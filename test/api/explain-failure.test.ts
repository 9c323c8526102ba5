// Connection failures in the user's terms: which hop failed and what to check, in one line.

import { describe, expect, it } from "vitest";
import { parseBaseUrl } from "../../src/api/base-url.js";
import { explainFailure } from "../../src/api/explain-failure.js";
import { parseProxyUrl } from "../../src/http/proxy.js";
import { TransportFailure } from "../../src/http/transport.js";

const base = parseBaseUrl("https://app.example.com/svc", { allowInsecureHttp: false });

function failure(reason: string, description: string, kind: TransportFailure["kind"] = "unreachable") {
  return new TransportFailure({ kind, reason, description, sent: false, retryable: false, phase: "connect" });
}

describe("explainFailure", () => {
  it.each([
    [
      "ERR_SSL_WRONG_VERSION_NUMBER",
      "wrong version number",
      "the server at https://app.example.com does not speak TLS: is the base URL http://app.example.com/svc?",
    ],
    [
      "EPROTO",
      "packet length too long",
      "the server at https://app.example.com does not speak TLS: is the base URL http://app.example.com/svc?",
    ],
    [
      "ENOTFOUND",
      "getaddrinfo ENOTFOUND app.example.com",
      "the host name app.example.com does not resolve (DNS lookup failed); check the base URL for typos, and this machine's DNS (if this network reaches the service only through a proxy, set HTTPS_PROXY)",
    ],
    [
      "EAI_AGAIN",
      "getaddrinfo EAI_AGAIN app.example.com",
      "the DNS lookup of app.example.com failed for now (EAI_AGAIN), after 3 attempts; check this machine's network and DNS (if this network reaches the service only through a proxy, set HTTPS_PROXY)",
    ],
    [
      "CERT_HAS_EXPIRED",
      "certificate has expired",
      "the TLS certificate of https://app.example.com is not valid now (certificate has expired); check the server's certificate and this machine's clock",
    ],
    [
      "ERR_TLS_CERT_ALTNAME_INVALID",
      "Hostname/IP does not match certificate's altnames",
      "the TLS certificate of https://app.example.com is for another host name (Hostname/IP does not match certificate's altnames); check the base URL's host name",
    ],
    [
      "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
      "unable to get local issuer certificate",
      "the TLS certificate of https://app.example.com is not trusted (unable to get local issuer certificate): if the service, or a proxy that inspects TLS, uses a private certificate authority, set NODE_EXTRA_CA_CERTS to a PEM file holding that CA's certificate",
    ],
  ])("%s", (reason, description, explanation) => {
    expect(explainFailure(failure(reason, description), { base, proxy: undefined, attempts: 3 })).toEqual({
      explanation,
    });
  });

  it("names the proxy that a request went through", () => {
    const proxy = parseProxyUrl("http://user:secret-pass@proxy.corp:3128", "HTTPS_PROXY");
    const explained = explainFailure(failure("ERR_SSL_WRONG_VERSION_NUMBER", "wrong version number"), {
      base,
      proxy,
      attempts: 1,
    });
    expect(explained.explanation).toBe(
      "the server at https://app.example.com (through the proxy http://proxy.corp:3128) does not speak TLS: is the base URL http://app.example.com/svc?",
    );
    const refused = explainFailure(
      new TransportFailure({
        kind: "proxy",
        reason: "proxy_407",
        description: "407 Proxy Authentication Required",
        sent: false,
        retryable: false,
        phase: "connect",
        proxyStatus: 407,
      }),
      { base, proxy, attempts: 1 },
    );
    expect(refused.explanation).toBe(
      "the proxy http://proxy.corp:3128 (from HTTPS_PROXY) refused the user name and password in HTTPS_PROXY: check them (URL-encoded) (407 Proxy Authentication Required)",
    );
    expect(JSON.stringify(refused)).not.toContain("secret-pass");
  });

  it("leaves failures it has nothing to add to alone", () => {
    expect(
      explainFailure(failure("ECONNREFUSED", "connect ECONNREFUSED 1.2.3.4:443"), {
        base,
        proxy: undefined,
        attempts: 5,
      }),
    ).toEqual({});
  });
});

describe("the base URL's /api", () => {
  it("drops a trailing /api with a note, keeps /api/api as a service mounted under /api", () => {
    const corrected = parseBaseUrl("https://app.example.com/api", { allowInsecureHttp: false });
    expect(corrected).toMatchObject({ prefix: "", display: "https://app.example.com" });
    expect(corrected.correction).toContain("ends with /api");
    const mounted = parseBaseUrl("https://gw.example.com/api/api/", { allowInsecureHttp: false });
    expect(mounted).toMatchObject({
      prefix: "/api",
      display: "https://gw.example.com/api",
      correction: undefined,
    });
    const prefixed = parseBaseUrl("https://gw.example.com/api/posthog", { allowInsecureHttp: false });
    expect(prefixed).toMatchObject({ prefix: "/api/posthog", correction: undefined });
  });
});
