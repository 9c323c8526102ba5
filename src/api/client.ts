// The HTTP client of the service: pool, key and rate limiter, each attempt sent through retry.ts.
// Its endpoint stack also reaches webhook receivers and Prometheus (connectForeignEndpoint).

import { AsyncLocalStorage } from "node:async_hooks";
import { setMaxListeners } from "node:events";
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { realSleep, type Sleep, sleepUnlessAborted } from "../abortable-sleep.js";
import { parseJson as parseJsonText } from "../files/read-json-file.js";
import { createDispatcher } from "../http/dispatcher.js";
import { type ProxyDecision, type ProxyEnvironment, type ProxyRoute, resolveProxy } from "../http/proxy.js";
import { type AttemptResponse, sendAttempt, TransportFailure } from "../http/transport.js";
import { InputError } from "../input-error.js";
import { packageVersion } from "../package-files.js";
import { SecretRegistry } from "../redact.js";
import { checkApiKey } from "./api-key.js";
import { type BaseUrl, buildUrl, isUnderBase, parseBaseUrl, type QueryParams } from "./base-url.js";
import { failureError } from "./explain-failure.js";
import { RateLimiter } from "./rate-limiter.js";
import type { ResponseShape, ResponseShapes } from "./response-schemas.js";
import {
  backoffDelayMs,
  RETRY_DEFAULTS,
  type RetryContext,
  type RetryOptions,
  type RetrySafety,
  type RetryStats,
  sendWithRetry,
} from "./retry.js";
import { type FailedRequest, ServiceError } from "./service-error.js";
import { validateResponse } from "./validate-response.js";

export interface ListBounds {
  /** A larger `count` is refused at the first page. */
  maxRecords: number;
  /** All pages and re-reads of one list together. */
  maxReadMs: number;
}

export const LIST_BOUND_DEFAULTS = {
  maxRecords: 100_000,
  maxReadMs: 300_000,
} as const satisfies ListBounds;

export interface ApiClientOptions extends EndpointOptions {
  /** May carry a path prefix (`https://host/posthog`). */
  baseUrl: string;
  apiKey: string;
  /** The run's secrets, which the client adds its key to. */
  secrets?: SecretRegistry | undefined;
  /** Allow plain http to hosts other than this machine. */
  allowInsecureHttp?: boolean | undefined;
  /** `--base-url`, `server.base_url at pcsync.yaml:3`: for messages. */
  baseUrlSource?: string | undefined;
  concurrency?: number | undefined;
  /** A family up to this size is read in one request. */
  pageSize?: number | undefined;
  /** Until the response headers arrive (also the connect timeout). */
  requestTimeoutMs?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  maxResponseBytes?: number | undefined;
  listBounds?: Partial<ListBounds> | undefined;
  retry?: Partial<RetryOptions> | undefined;
  /** `--treat-5xx-as-in-flight`: for a proxy that imitates the service's error envelope. */
  treat5xxAsInFlight?: boolean | undefined;
  /** Each attempt's status, or `"error"` when no response came: `pcsync watch` counts them. */
  onAttempt?: ((method: HttpMethod, status: number | "error") => void) | undefined;
}

export const CLIENT_DEFAULTS = {
  allowInsecureHttp: false,
  concurrency: 8,
  pageSize: 1000,
  requestTimeoutMs: 30_000,
  bodyTimeoutMs: 60_000,
  maxResponseBytes: 64 * 1024 * 1024,
  listBounds: LIST_BOUND_DEFAULTS,
  retry: RETRY_DEFAULTS,
} as const satisfies Partial<ApiClientOptions>;

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export interface RequestSpec {
  method: HttpMethod;
  /** Under the base URL (from `client.url()` or a checked `next` link). */
  url: URL;
  /** Sent as JSON. */
  body?: unknown;
  /** Default: `unsafe` for POST, `idempotent` otherwise. */
  safety?: RetrySafety;
  /** DELETE: a 404 after an attempt whose outcome is unknown means that attempt did the job. */
  notFoundMeansDone?: boolean;
}

export interface ApiResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  attempts: number;
}

/** Counters for the verbose summary and the benchmark. */
export interface ApiStats extends RetryStats {
  /** Attempts sent, retries included. */
  requests: number;
  responsesByStatus: Record<number, number>;
  transportFailures: number;
  bytesSent: number;
  bytesReceived: number;
}

export class ApiClient {
  readonly base: BaseUrl;
  /** What this client's errors and excerpts must hide: its key, and the run's. */
  readonly secrets: SecretRegistry;
  readonly pageSize: number;
  readonly concurrency: number;
  readonly retryOptions: RetryOptions;
  readonly listBounds: ListBounds;
  readonly timeScale: number;
  readonly limiter: RateLimiter;
  readonly stats: ApiStats = {
    requests: 0,
    responsesByStatus: {},
    transportFailures: 0,
    retries: 0,
    throttled: 0,
    bytesSent: 0,
    bytesReceived: 0,
  };

  readonly requestTimeoutMs: number;
  readonly signal: AbortSignal | undefined;

  // Private fields stay out of util.inspect and JSON.stringify: the key lives only here.
  readonly #authorization: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #proxy: ProxyRoute | undefined;
  readonly #bounds: { headersTimeoutMs: number; bodyTimeoutMs: number; maxResponseBytes: number };
  readonly #onAttempt: ((method: HttpMethod, status: number | "error") => void) | undefined;
  readonly #retry: RetryContext;
  #closed = false;
  readonly #ahead = new AsyncLocalStorage<boolean>();
  readonly #firstWrite = new AsyncLocalStorage<{ hook: (() => Promise<void>) | undefined }>();

  constructor(options: ApiClientOptions) {
    const apiKey = checkApiKey(options.apiKey, "the client options");
    // The key is a secret of the run that gave the registry, and of the client's own errors.
    this.secrets = options.secrets ?? new SecretRegistry();
    this.secrets.register(apiKey);
    this.#authorization = `Bearer ${apiKey}`;
    this.base = parseBaseUrl(options.baseUrl, {
      allowInsecureHttp: options.allowInsecureHttp ?? CLIENT_DEFAULTS.allowInsecureHttp,
      source: options.baseUrlSource,
    });
    this.concurrency = positiveInteger(options.concurrency ?? CLIENT_DEFAULTS.concurrency, "concurrency");
    this.pageSize = positiveInteger(options.pageSize ?? CLIENT_DEFAULTS.pageSize, "pageSize");
    const timeScale = options.timeScale ?? 1;
    if (!(timeScale > 0 && Number.isFinite(timeScale))) throw new RangeError("timeScale must be positive");
    this.timeScale = timeScale;
    const scaled = (ms: number) => Math.max(1, Math.round(ms * timeScale));
    const timeout = (name: "requestTimeoutMs" | "bodyTimeoutMs") =>
      positiveInteger(scaled(options[name] ?? CLIENT_DEFAULTS[name]), name);
    this.requestTimeoutMs = timeout("requestTimeoutMs");
    this.#bounds = {
      headersTimeoutMs: this.requestTimeoutMs,
      bodyTimeoutMs: timeout("bodyTimeoutMs"),
      maxResponseBytes: positiveInteger(
        options.maxResponseBytes ?? CLIENT_DEFAULTS.maxResponseBytes,
        "maxResponseBytes",
      ),
    };
    const retry = { ...CLIENT_DEFAULTS.retry, ...definedEntries(options.retry ?? {}) };
    this.retryOptions = {
      retries: retry.retries,
      baseDelayMs: scaled(retry.baseDelayMs),
      maxDelayMs: scaled(retry.maxDelayMs),
      maxRetryAfterMs: scaled(retry.maxRetryAfterMs),
    };
    const listBounds = { ...CLIENT_DEFAULTS.listBounds, ...definedEntries(options.listBounds ?? {}) };
    this.listBounds = {
      maxRecords: positiveInteger(listBounds.maxRecords, "listBounds.maxRecords"),
      maxReadMs: positiveInteger(scaled(listBounds.maxReadMs), "listBounds.maxReadMs"),
    };
    this.#onAttempt = options.onAttempt;
    this.signal = options.signal;
    // Every request waiting for a slot listens for the abort: hundreds may wait at once.
    if (options.signal) setMaxListeners(0, options.signal);
    const stack = createEndpointStack({
      ...options,
      origin: this.base.origin,
      connections: this.concurrency,
      connectTimeoutMs: this.requestTimeoutMs,
      retry: this.retryOptions,
      stats: this.stats,
    });
    this.#retry = stack.retry;
    this.limiter = stack.retry.limiter;
    this.#proxy = stack.proxy.route;
    if (stack.proxy.note !== undefined) this.traceLine(`proxy: ${stack.proxy.note}`);
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher = stack.dispatcher;
  }

  /** An API path such as `/api/projects/`, under the base URL's prefix. */
  url(path: string, query?: QueryParams): URL {
    return buildUrl(this.base, path, query);
  }

  isUnderBase(url: URL): boolean {
    return isUnderBase(this.base, url);
  }

  /** What errors about a request need: never its headers. */
  describeRequest(method: string, url: URL): FailedRequest {
    return { method, path: url.pathname, secrets: this.secrets };
  }

  traceLine(line: string): void {
    this.#retry.trace(line);
  }

  /** `retryNumber` counts from 1. */
  backoffDelayMs(retryNumber: number): number {
    return backoffDelayMs(retryNumber, this.retryOptions, this.#retry.random);
  }

  /**
   * `task`'s requests go ahead of the client's pacing and queue (never of a pause the service asked
   * for): a create being settled holds up its family, so its re-reads should not wait behind writes.
   */
  ahead<T>(task: () => Promise<T>): Promise<T> {
    return this.#ahead.run(true, task);
  }

  /**
   * `hook` runs once, slot held, just before `task`'s first non-GET attempt leaves: a write's journal
   * intent is on disk before the write is sent, and only a write that is sent has one.
   */
  beforeFirstWrite<T>(hook: () => Promise<void>, task: () => Promise<T>): Promise<T> {
    return this.#firstWrite.run({ hook }, task);
  }

  /**
   * The longest one request can take against a service that hangs or throttles: every attempt (two
   * budgets of `retries`: faults and 429s) at its full timeouts, after the longest waits. What
   * `watch`'s /healthz allows a cycle in progress beyond its intervals.
   */
  get longestRequestMs(): number {
    const { retries, maxDelayMs, maxRetryAfterMs } = this.retryOptions;
    const attemptMs = 2 * this.requestTimeoutMs + this.#bounds.bodyTimeoutMs;
    return (1 + 2 * retries) * attemptMs + retries * (maxDelayMs + maxRetryAfterMs);
  }

  now(): number {
    return this.#retry.now();
  }

  /** Rejects with the signal's reason once the client's signal aborts. */
  sleep(ms: number): Promise<void> {
    return this.#retry.sleep(ms);
  }

  /** Resolves with a 2xx (or the 404 of a DELETE an earlier attempt did); throws a PcsyncError otherwise. */
  async request(spec: RequestSpec): Promise<ApiResponse> {
    if (this.#closed) throw new InputError("invalid_request", { message: "The API client is closed." });
    const { method, url } = spec;
    const failedRequest = this.describeRequest(method, url);
    if (!this.isUnderBase(url)) {
      throw new InputError("invalid_request", {
        message: `Refusing to send the API key to ${url.origin}${url.pathname}: it is outside ${this.base.display}.`,
      });
    }
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: "application/json",
      "user-agent": `pcsync/${packageVersion()}`,
    };
    if (body !== undefined) headers["content-type"] = "application/json";
    const traceLabel = `${method} ${url.pathname}${url.search}`;
    const last = await sendWithRetry(this.#retry, {
      failedRequest,
      traceLabel,
      safety: spec.safety ?? (method === "POST" ? "unsafe" : "idempotent"),
      notFoundMeansDone: spec.notFoundMeansDone === true,
      ahead: this.#ahead.getStore() === true,
      beforeFirstAttempt: method === "GET" ? undefined : this.#takeFirstWriteHook(),
      send: () => this.#sendAttempt({ method, url, headers, body }, traceLabel),
    });
    if (last.failure === undefined && last.done) return { ...last.response, attempts: last.attempts };
    throw failureError(failedRequest, url, last, {
      base: this.base,
      proxy: this.#proxy,
      secrets: this.secrets,
      bounds: this.#bounds,
      now: this.now(),
      hasSucceeded: this.hasSucceeded(),
    });
  }

  /** Once: the task's later writes go without it. */
  #takeFirstWriteHook(): (() => Promise<void>) | undefined {
    const store = this.#firstWrite.getStore();
    const hook = store?.hook;
    if (store !== undefined) store.hook = undefined;
    return hook;
  }

  async #sendAttempt(
    request: { method: HttpMethod; url: URL; headers: Record<string, string>; body: string | undefined },
    traceLabel: string,
  ): Promise<AttemptResponse> {
    const startedAt = this.now();
    this.stats.requests += 1;
    if (request.body !== undefined) this.stats.bytesSent += Buffer.byteLength(request.body);
    let response: AttemptResponse;
    try {
      response = await sendAttempt(this.#dispatcher, { ...request, ...this.#bounds });
    } catch (error) {
      if (error instanceof TransportFailure) {
        this.stats.transportFailures += 1;
        this.#onAttempt?.(request.method, "error");
        this.traceLine(`${traceLabel} -> ${error.message} (${this.now() - startedAt} ms)`);
      }
      throw error;
    }
    const { status } = response;
    this.stats.responsesByStatus[status] = (this.stats.responsesByStatus[status] ?? 0) + 1;
    this.#onAttempt?.(request.method, status);
    this.stats.bytesReceived += response.body.length;
    this.traceLine(
      `${traceLabel} -> ${status} (${this.now() - startedAt} ms, ${response.body.length} bytes)`,
    );
    return response;
  }

  async requestJson<S extends ResponseShape>(spec: RequestSpec, shape: S): Promise<ResponseShapes[S]> {
    const response = await this.request(spec);
    return this.parseJson(spec, response.body, shape);
  }

  parseJson<S extends ResponseShape>(spec: RequestSpec, body: Buffer, shape: S): ResponseShapes[S] {
    const failedRequest = this.describeRequest(spec.method, spec.url);
    // Kept as sent (plan compares it, export writes it): a reflected key is redacted at the output.
    const text = body.toString("utf8");
    const { value, problem } = parseJsonText(text);
    if (problem !== undefined) {
      // Cut so that the redaction at the output still recognises a key the excerpt would hold.
      const start = this.secrets.excerpt(text.trimStart(), 40).replace(/\s+/g, " ");
      throw new ServiceError("malformed_response", failedRequest, {
        problem:
          text.trim() === ""
            ? "empty body where JSON was expected"
            : `not JSON (it starts with ${JSON.stringify(start)})`,
      });
    }
    const result = validateResponse(shape, value);
    if (!result.ok) throw new ServiceError("malformed_response", failedRequest, { problem: result.problem });
    return result.value;
  }

  /** Whether any request has had a 2xx answer: the base URL reaches the API. */
  hasSucceeded(): boolean {
    return Object.keys(this.stats.responsesByStatus).some((status) => Number(status) < 300);
  }

  /** Requests in flight finish first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/** Drops keys whose value is undefined, so they do not override defaults. */
function definedEntries<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** The options (of ApiClientOptions) that are the endpoint stack's. */
interface EndpointOptions {
  /** Client side; none by default. */
  maxRps?: number | undefined;
  /**
   * Multiplies every duration the client uses, given or default (and apply's proof window and
   * settle time): tests shrink time with it and keep the defaults' proportions.
   */
  timeScale?: number | undefined;
  /** One line per attempt; may quote the server (a `next` link), so it must go out redacted. */
  trace?: ((line: string) => void) | undefined;
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
  sleep?: Sleep | undefined;
  /** Once aborted, no attempt starts; attempts already sent finish or time out. */
  signal?: AbortSignal | undefined;
  /** Used instead of the client's own pool, and not closed by `close()`. */
  dispatcher?: Dispatcher | undefined;
  /** Where the *_PROXY variables are read from; without it the client connects directly. */
  proxyEnvironment?: ProxyEnvironment | undefined;
}

type EndpointStackOptions = EndpointOptions & {
  origin: string;
  connections: number;
  connectTimeoutMs: number;
  retry: RetryOptions;
  stats?: RetryStats;
  treat5xxAsInFlight?: boolean | undefined;
};

function createEndpointStack(options: EndpointStackOptions) {
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
    proofRules: { fiveXxInFlight: options.treat5xxAsInFlight === true },
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
  connections: number;
  connectTimeoutMs: number;
  /** The first included. */
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
    holdsLongThrottle: false,
  };
  return createEndpointStack({ ...connection, retry });
}
