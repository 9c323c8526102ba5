// The stack every HTTP endpoint is reached through, the service's (client.ts) and any other (a
// webhook receiver, a Prometheus server): a dispatcher of its own (proxy, connect timeout) and a
// retry context of the one policy (retry.ts), paced by a limiter of its own.

import type { Dispatcher } from "undici";
import { realSleep, type Sleep, sleepUnlessAborted } from "../abortable-sleep.js";
import { createDispatcher } from "../http/dispatcher.js";
import { type ProxyDecision, type ProxyEnvironment, resolveProxy } from "../http/proxy.js";
import { RateLimiter } from "./rate-limiter.js";
import type { RetryContext, RetryOptions } from "./retry.js";

/** The client's options (ApiClientOptions) that are the endpoint stack's: pacing, transport, tests' clock. */
export interface EndpointOptions {
  /** Requests per second at most (client side); none by default. */
  maxRps?: number | undefined;
  /**
   * Multiplies every duration the client uses, given or default: timeouts, backoffs, the longest
   * Retry-After honoured, the list time bound and the rate limiter's own constants (and apply's
   * proof window and settle time). Tests shrink time with it and keep the defaults' proportions.
   */
  timeScale?: number | undefined;
  /**
   * Receives one line per request attempt (method, URL, status, time, size). Lines may quote what
   * the server sent (a `next` link), so they go out through a redacting writer, as all output does.
   */
  trace?: ((line: string) => void) | undefined;
  /** Injected for tests: jitter source, clock and sleep. */
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
  sleep?: Sleep | undefined;
  /**
   * Once aborted, no request attempt starts: requests waiting for a slot, for the rate or for a
   * retry reject with RequestAbortedError. Attempts already sent finish or time out.
   */
  signal?: AbortSignal | undefined;
  /** An undici dispatcher to use instead of the client's own keep-alive pool (not closed by `close()`). */
  dispatcher?: Dispatcher | undefined;
  /**
   * Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY (and their lower-case forms) are read from: the
   * CLI passes its environment. Without it the client connects directly.
   */
  proxyEnvironment?: ProxyEnvironment | undefined;
}

/** The stack's options, and what the client derives for it. */
type EndpointStackOptions = EndpointOptions & {
  origin: string;
  /** Requests in flight at most. */
  connections: number;
  connectTimeoutMs: number;
  retry: RetryOptions;
  stats?: RetryContext["stats"];
};

/** The dispatcher, whether requests go through a proxy and why (for `--verbose`), and the retry context. */
export function createEndpointStack(options: EndpointStackOptions) {
  const { origin, signal, proxyEnvironment } = options;
  const proxy: ProxyDecision =
    proxyEnvironment === undefined || options.dispatcher !== undefined
      ? { route: undefined, note: undefined }
      : resolveProxy(origin, proxyEnvironment);
  const dispatcher =
    options.dispatcher ??
    createDispatcher({
      origin,
      connections: options.connections,
      connectTimeoutMs: options.connectTimeoutMs,
      proxy: proxy.route,
    });
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const { maxRps, timeScale, trace } = options;
  const retry = {
    limiter: new RateLimiter({ concurrency: options.connections, maxRps, timeScale, now, sleep }),
    options: options.retry,
    signal,
    stats: options.stats ?? { retries: 0, throttled: 0 },
    random: options.random ?? Math.random,
    now,
    sleep: (ms: number) => sleepUnlessAborted(sleep, ms, signal),
    trace: (line: string) => trace?.(line),
  };
  return { dispatcher, proxy, retry };
}

/** An endpoint other than the service, with bounds of the caller's. */
export function connectForeignEndpoint(options: {
  origin: string;
  /** Requests in flight at most. */
  connections: number;
  connectTimeoutMs: number;
  /** Attempts of one request, the first included. */
  attempts: number;
  /** The first retry's wait (full jitter), doubling up to maxBackoffMs, which also caps a Retry-After. */
  backoffMs: number;
  maxBackoffMs: number;
  proxyEnvironment?: ProxyEnvironment | undefined;
  /** Once aborted, no attempt starts and no retry waits. */
  signal: AbortSignal;
}): { dispatcher: Dispatcher; retry: RetryContext } {
  const { attempts, backoffMs, maxBackoffMs, ...connection } = options;
  const retry = {
    retries: attempts - 1,
    baseDelayMs: backoffMs,
    maxDelayMs: maxBackoffMs,
    maxRetryAfterMs: maxBackoffMs,
  };
  return createEndpointStack({ ...connection, retry });
}
