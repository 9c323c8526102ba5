// An HTTP endpoint other than the service (a webhook receiver, a Prometheus server), reached
// through the same stack as the service: its own dispatcher (proxy, connect timeout) and a retry
// context of the one policy (retry.ts) with bounds of the caller's, paced by a limiter of its own.

import type { Dispatcher } from "undici";
import { realSleep, sleepUnlessAborted } from "../abortable-sleep.js";
import { createDispatcher } from "./dispatcher.js";
import { type ProxyEnvironment, resolveProxy } from "./proxy.js";
import { RateLimiter } from "./rate-limiter.js";
import type { RetryContext } from "./retry.js";

export interface ForeignEndpointOptions {
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
}

export function connectForeignEndpoint(options: ForeignEndpointOptions): {
  dispatcher: Dispatcher;
  retry: RetryContext;
} {
  const proxy =
    options.proxyEnvironment === undefined
      ? undefined
      : resolveProxy(options.origin, options.proxyEnvironment).route;
  const dispatcher = createDispatcher({
    origin: options.origin,
    connections: options.connections,
    connectTimeoutMs: options.connectTimeoutMs,
    proxy,
  });
  const { signal } = options;
  const retry: RetryContext = {
    limiter: new RateLimiter({ concurrency: options.connections }),
    options: {
      retries: options.attempts - 1,
      baseDelayMs: options.backoffMs,
      maxDelayMs: options.maxBackoffMs,
      maxRetryAfterMs: options.maxBackoffMs,
    },
    signal,
    stats: { retries: 0, throttled: 0 },
    random: Math.random,
    now: Date.now,
    sleep: (ms) => sleepUnlessAborted(realSleep, ms, signal),
    trace: () => undefined,
  };
  return { dispatcher, retry };
}
