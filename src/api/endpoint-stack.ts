// The stack every HTTP endpoint is reached through, the service's (client.ts) and any other (a
// webhook receiver, a Prometheus server): a dispatcher of its own (proxy, connect timeout) and a
// retry context of the one policy (retry.ts), paced by a limiter of its own.

import type { Dispatcher } from "undici";
import { realSleep, sleepUnlessAborted } from "../abortable-sleep.js";
import { createDispatcher } from "../http/dispatcher.js";
import { type ProxyDecision, type ProxyEnvironment, resolveProxy } from "../http/proxy.js";
import type { ApiClientOptions } from "./client.js";
import { RateLimiter } from "./rate-limiter.js";
import type { RetryContext, RetryOptions } from "./retry.js";

/** The options of the client that are the stack's, and what the client derives for it. */
type EndpointStackOptions = Pick<
  ApiClientOptions,
  "maxRps" | "timeScale" | "proxyEnvironment" | "dispatcher" | "signal" | "random" | "now" | "sleep" | "trace"
> & {
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
