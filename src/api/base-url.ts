// The base URL: parsed once, checked for transport safety, and the only place URLs are built from
// or checked against, so no request or followed link can leave its origin and path prefix.

import { isIP } from "node:net";
import { InsecureHttpError, InvalidBaseUrlError } from "./errors.js";

export interface BaseUrl {
  /** e.g. `https://app.example.com` */
  readonly origin: string;
  /** The path prefix without a trailing slash: `""` or e.g. `/posthog`. */
  readonly prefix: string;
  /** Origin plus prefix, for messages. */
  readonly display: string;
}

/** Query parameters; an array repeats the parameter, `undefined` leaves it out. */
export type QueryParams = Readonly<Record<string, string | number | readonly string[] | undefined>>;

export function parseBaseUrl(value: string, options: { allowInsecureHttp: boolean }): BaseUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidBaseUrlError(
      JSON.stringify(value),
      "not an absolute URL; use e.g. https://app.example.com",
    );
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new InvalidBaseUrlError(shown, "only http:// and https:// are supported");
  }
  // Credentials in the URL would end up in traces and messages; the key is the only credential.
  if (url.username !== "" || url.password !== "") {
    throw new InvalidBaseUrlError(shown, "it must not contain a user name or password");
  }
  if (url.search !== "" || url.hash !== "") {
    throw new InvalidBaseUrlError(shown, "it must not have a query string or fragment");
  }
  if (url.protocol === "http:" && !options.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new InsecureHttpError(url.host);
  }
  const prefix = url.pathname.replace(/\/+$/, "");
  return { origin: url.origin, prefix, display: `${url.origin}${prefix}` };
}

/** Hosts that never leave this machine, where plain http exposes nothing. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || /^::ffff:127\./.test(host);
  return false;
}

/** `path` is an API path such as `/api/projects/1/plugin_configs/`, already encoded. */
export function buildUrl(base: BaseUrl, path: string, query: QueryParams = {}): URL {
  const url = new URL(`${base.origin}${base.prefix}${path}`);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === "string" || typeof value === "number") url.searchParams.append(name, String(value));
    else for (const item of value) url.searchParams.append(name, item);
  }
  return url;
}

/** Whether a URL is on the base origin and under its path prefix: the only URLs the key goes to. */
export function isUnderBase(base: BaseUrl, url: URL): boolean {
  if (url.origin !== base.origin) return false;
  if (url.username !== "" || url.password !== "") return false;
  return url.pathname.startsWith(`${base.prefix}/`);
}
