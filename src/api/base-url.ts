// The base URL: parsed once, checked, and the only place URLs are built from or checked against,
// so no request or followed link can leave its origin and path prefix.

import { FAMILIES } from "../families.js";
import { isLoopbackHost } from "../http/proxy.js";
import { InputError } from "../input-error.js";

export interface BaseUrl {
  readonly origin: string;
  /** Without a trailing slash: `""` or e.g. `/posthog`. */
  readonly prefix: string;
  /** Origin plus prefix, for messages. */
  readonly display: string;
  /** What was corrected (a trailing `/api`), for a warning. */
  readonly correction?: string | undefined;
  /** `server.base_url at pcsync.yaml:3`, `PCSYNC_BASE_URL`: for messages. */
  readonly source?: string | undefined;
}

/** An array repeats the parameter, `undefined` leaves it out. */
export type QueryParams = Readonly<Record<string, string | number | readonly string[] | undefined>>;

// Every API path starts with /api/: a base URL that ends with it would make them /api/api/...
const API_SUFFIX = /\/api\/*$/;
// A base URL that already holds an endpoint's path (pasted from a browser or the API docs).
const ENDPOINT_PATH = new RegExp(
  `/api/(?:projects|${FAMILIES.map((family) => family.pathSegment).join("|")})(?:/|$)`,
);

export function parseBaseUrl(
  value: string,
  options: { allowInsecureHttp: boolean; source?: string | undefined },
): BaseUrl {
  const { source } = options;
  const invalid = (shown: string, reason: string) =>
    new InputError("invalid_base_url", { shown, reason, source });
  const notAbsolute = "not an absolute URL; use e.g. https://app.example.com";
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim())) {
    // `app.example.com` or `localhost:8000`: a URL parser reads the latter as scheme `localhost:`.
    const written = value.trim().split(/[?#]/)[0] ?? "";
    const host = written.split("/")[0] ?? "";
    if (!/^[\w.-]+(?::\d+)?$/.test(host) || host.includes("@")) throw invalid("given", notAbsolute);
    const scheme = isLoopbackHost(host.replace(/:\d+$/, "")) ? "http" : "https";
    throw invalid(JSON.stringify(written), `it has no scheme: write ${scheme}://${written}`);
  }
  if (!URL.canParse(value)) throw invalid("given", notAbsolute);
  const url = new URL(value);
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalid(shown, "only http:// and https:// are supported");
  // Credentials in the URL would end up in traces and messages; the key is the only credential.
  if (url.username !== "" || url.password !== "")
    throw invalid(shown, "it must not contain a user name or password");
  if (url.search !== "" || url.hash !== "")
    throw invalid(shown, "it must not have a query string or fragment");
  if (url.protocol === "http:" && !options.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new InputError("insecure_http", { host: url.host, source });
  }
  if (ENDPOINT_PATH.test(url.pathname)) {
    throw invalid(
      shown,
      `it holds an API path; give the service's root URL, e.g. ${url.origin}${url.pathname.replace(/\/api\/.*$/, "")} (pcsync adds /api/projects/... itself)`,
    );
  }
  let prefix = url.pathname.replace(/\/+$/, "");
  let correction: string | undefined;
  if (API_SUFFIX.test(prefix)) {
    const stripped = prefix.replace(API_SUFFIX, "");
    // `.../api/api` says on purpose that the service is mounted under `.../api`.
    if (!API_SUFFIX.test(stripped)) {
      correction = `the base URL ${shown}${fromWhere(source)} ends with /api, which pcsync adds to every request itself: using ${url.origin}${stripped}. If the service is really mounted under ${url.origin}${stripped}/api, write ${url.origin}${stripped}/api/api.`;
    }
    prefix = stripped;
  }
  return { origin: url.origin, prefix, display: `${url.origin}${prefix}`, correction, source };
}

/** ` (from server.base_url at pcsync.yaml:3)`, or nothing when the source is not known. */
export function fromWhere(source: string | undefined): string {
  return source === undefined ? "" : ` (from ${source})`;
}

/** `path` is already encoded. */
export function buildUrl(base: BaseUrl, path: string, query: QueryParams = {}): URL {
  const url = new URL(`${base.origin}${base.prefix}${path}`);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === "string" || typeof value === "number") url.searchParams.append(name, String(value));
    else for (const item of value) url.searchParams.append(name, item);
  }
  return url;
}

/** The only URLs the key goes to. */
export function isUnderBase(base: BaseUrl, url: URL): boolean {
  if (url.origin !== base.origin) return false;
  if (url.username !== "" || url.password !== "") return false;
  return url.pathname.startsWith(`${base.prefix}/`);
}
