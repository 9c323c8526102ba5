// Which proxy, if any, carries the requests to an origin: HTTPS_PROXY, HTTP_PROXY and NO_PROXY read
// as curl and Go read them, once per client (a client talks to one origin).

import { BlockList, isIP } from "node:net";
import { InputError } from "../input-error.js";

/** Lower case first, as curl. */
const PROXY_VARIABLES = {
  "https:": ["https_proxy", "HTTPS_PROXY"],
  "http:": ["http_proxy", "HTTP_PROXY"],
} as const;
const NO_PROXY_VARIABLES = ["no_proxy", "NO_PROXY"] as const;

export type ProxyEnvironment = Readonly<Record<string, string | undefined>>;

export interface ProxyRoute {
  /** With any user name and password: for the dispatcher only, never shown. */
  readonly url: URL;
  /** Scheme, host and port, never its credentials. */
  readonly display: string;
  /** e.g. `HTTPS_PROXY`. */
  readonly variable: string;
}

/** `note`: why, for `--verbose`. */
export type ProxyDecision =
  | { readonly route: ProxyRoute; readonly note: string }
  | { readonly route: undefined; readonly note: string | undefined };

/**
 * None for this machine (a proxy cannot reach our loopback). A variable that is not a usable proxy
 * URL is an error that never quotes it (it may hold a password).
 */
export function resolveProxy(origin: string, env: ProxyEnvironment): ProxyDecision {
  const target = new URL(origin);
  const scheme = target.protocol === "https:" ? "https:" : "http:";
  const variable = PROXY_VARIABLES[scheme].find((name) => nonEmpty(env[name]) !== undefined);
  if (variable === undefined) return { route: undefined, note: undefined };
  const hostname = normaliseHost(target.hostname);
  const port = Number(target.port) || (scheme === "https:" ? 443 : 80);
  if (isLoopbackHost(hostname)) {
    return { route: undefined, note: `${target.host} is this machine: not through the proxy` };
  }
  const noProxyVariable = NO_PROXY_VARIABLES.find((name) => nonEmpty(env[name]) !== undefined);
  const entry =
    noProxyVariable === undefined ? undefined : matchNoProxy(hostname, port, env[noProxyVariable] ?? "");
  if (entry !== undefined) {
    return {
      route: undefined,
      note: `${target.host} is in ${noProxyVariable} (${entry}): not through the proxy`,
    };
  }
  const route = parseProxyUrl(env[variable] ?? "", variable);
  return { route, note: `${target.host} through the proxy ${route.display} (from ${variable})` };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** Without a scheme it is http:// (as curl and Go read `proxy.example.com:3128`). */
export function parseProxyUrl(value: string, variable: string): ProxyRoute {
  const invalid = (reason: string) => new InputError("invalid_proxy", { variable, reason });
  const text = value.trim();
  const written = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  if (!URL.canParse(written)) throw invalid("it is not a URL; write it as http://HOST:PORT");
  const url = new URL(written);
  const display = `${url.protocol}//${url.host}`;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalid(`pcsync supports http:// and https:// proxies, not ${url.protocol}// (${display})`);
  }
  if (url.hostname === "") throw invalid("it names no host; write it as http://HOST:PORT");
  return { url, display, variable };
}

/** `[::1]` -> `::1`, `Example.COM.` -> `example.com`. */
function normaliseHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/**
 * Entries: `*`; a domain, covering its subdomains (`example.com`, `.example.com` and `*.example.com`
 * alike); an IP address or CIDR range; each optionally with `:PORT` (`[::1]:8443` for IPv6).
 */
export function matchNoProxy(hostname: string, port: number, noProxy: string): string | undefined {
  const host = normaliseHost(hostname);
  const hostIpVersion = isIP(host);
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return raw;
    const { name, entryPort } = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    if (name.includes("/") || isIP(name) !== 0) {
      // An address is the range of that address alone.
      const range = name.includes("/") ? name : `${name}/${isIP(name) === 6 ? 128 : 32}`;
      if (hostIpVersion !== 0 && inCidr(host, hostIpVersion, range)) return raw;
      continue;
    }
    const domain = normaliseHost(name.replace(/^\*?\./, ""));
    if (domain === "") continue;
    if (host === domain || host.endsWith(`.${domain}`)) return raw;
  }
  return undefined;
}

/** `host:port`, `[v6]:port`, `[v6]`, a bare IPv6 address (which has colons but no port). */
function splitPort(entry: string): { name: string; entryPort: number | undefined } {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+):(\d+)$/.exec(entry);
  if (!match) return { name: entry, entryPort: undefined };
  return { name: match[1] ?? "", entryPort: match[2] === undefined ? undefined : Number(match[2]) };
}

function ipType(version: number): "ipv4" | "ipv6" {
  return version === 6 ? "ipv6" : "ipv4";
}

function inCidr(host: string, version: number, cidr: string): boolean {
  const [network = "", bits = ""] = cidr.split("/");
  const networkVersion = isIP(network);
  const prefix = Number(bits);
  if (networkVersion === 0 || !/^\d+$/.test(bits) || prefix > (networkVersion === 6 ? 128 : 32)) return false;
  const list = new BlockList();
  list.addSubnet(network, prefix, ipType(networkVersion));
  return list.check(host, ipType(version));
}

/**
 * Hosts that never leave this machine: no proxy can reach them, and plain http to them exposes
 * nothing (the base URL, a webhook, Prometheus may use it).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || /^::ffff:127\./.test(host);
  return false;
}
