// A client's keep-alive pool to its origin, direct or through a proxy's CONNECT tunnel; a failure
// to reach or pass the proxy is told apart from a failure of the server.

import type { buildConnector } from "undici";
// By path (undici has no exports map; typed in undici-parts.d.ts): undici's index loads all of
// undici, which cost a `pcsync plan` more start-up time than everything else it imports.
import undiciApi from "undici/lib/api/index.js";
import Dispatcher from "undici/lib/dispatcher/dispatcher.js";
import Pool from "undici/lib/dispatcher/pool.js";
import ProxyAgent from "undici/lib/dispatcher/proxy-agent.js";
import { describeError } from "../errors.js";
import type { ProxyRoute } from "./proxy.js";

// What undici's index does as it loads: the proxy's tunnel needs connect().
Object.assign(Dispatcher.prototype, undiciApi);

export interface DispatcherOptions {
  origin: string;
  connections: number;
  /** With a proxy, also its answer to CONNECT. */
  connectTimeoutMs: number;
  proxy?: ProxyRoute | undefined;
}

const KEEP_ALIVE_MS = 10_000;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { origin, connections, connectTimeoutMs, proxy } = options;
  if (proxy === undefined) {
    return new Pool(origin, {
      connections,
      keepAliveTimeout: KEEP_ALIVE_MS,
      connect: { timeout: connectTimeoutMs },
    });
  }
  return new ProxyAgent({
    uri: proxy.url.href,
    // Every request, plain http included, goes through a CONNECT tunnel: the proxy gets only
    // `CONNECT host:port` (and the proxy's own credentials), never the request and its key as
    // headers of its own, as a forwarding proxy would.
    proxyTunnel: true,
    proxyTls: { timeout: connectTimeoutMs },
    requestTls: { timeout: connectTimeoutMs },
    // The connection to the proxy: its errors are marked as the proxy's, and a proxy that never
    // answers CONNECT runs into the same bound as a service that never answers.
    clientFactory: (proxyOrigin, clientOptions) =>
      new Pool(proxyOrigin, {
        ...clientOptions,
        headersTimeout: connectTimeoutMs,
        connect: markErrors(connectorOf(clientOptions), markProxyLeg),
      }),
    // The pool to the service through tunnels: its connection limit, keep-alive, and failures of
    // the tunnel (not of the service's TLS) reported as the proxy's.
    factory: (serviceOrigin, poolOptions) =>
      new Pool(serviceOrigin, {
        ...poolOptions,
        connections,
        keepAliveTimeout: KEEP_ALIVE_MS,
        connect: markErrors(connectorOf(poolOptions), wrapTunnelFailure),
      }),
  });
}

/** The tunnel did not open, so the request never reached the service; its cause is what went wrong. */
export const PROXY_TUNNEL_FAILURE = "PCSYNC_PROXY_TUNNEL";

function tunnelFailure(cause: Error): Error {
  return Object.assign(new Error(describeError(cause), { cause }), { code: PROXY_TUNNEL_FAILURE });
}

const PROXY_LEG = Symbol("failed on the way to the proxy");

function markProxyLeg(error: Error): Error {
  Object.defineProperty(error, PROXY_LEG, { value: true });
  return error;
}

/**
 * The service's TLS errors come through the tunnel's connector too: those stay the service's.
 * Anything else (the proxy unreachable, its refusal of CONNECT, its TLS) is the proxy's.
 */
function wrapTunnelFailure(error: Error): Error {
  const code = (error as { code?: unknown }).code;
  const serviceTls = typeof code === "string" && isTlsFailure(code);
  return (error as { [PROXY_LEG]?: boolean })[PROXY_LEG] !== true && serviceTls
    ? error
    : tunnelFailure(error);
}

/** A certificate, a protocol mismatch. */
export function isTlsFailure(code: string): boolean {
  return (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.startsWith("CERT_") ||
    code.includes("SELF_SIGNED") ||
    code.startsWith("UNABLE_TO_") ||
    code === "EPROTO"
  );
}

type Connector = buildConnector.connector;

function connectorOf(options: object): Connector {
  const connect = (options as { connect?: unknown }).connect;
  if (typeof connect !== "function") throw new TypeError("undici gave the pool no connector");
  return connect as Connector;
}

function markErrors(connect: Connector, mark: (error: Error) => Error): Connector {
  return (options, callback) =>
    connect(options, (error, socket) => {
      if (error !== null) callback(mark(error), null);
      else callback(null, socket);
    });
}
