// Delivers watch events to webhooks without ever holding up a cycle: each webhook has its own
// queue, delivered in order, each POST bounded by a timeout and retried with backoff when the
// receiver is down, slow or failing (5xx, 429). A full queue drops its oldest event, with a warning.

import { randomUUID } from "node:crypto";
import { type Dispatcher, request } from "undici";
import { createDispatcher } from "../api/dispatcher.js";
import { type ProxyEnvironment, resolveProxy } from "../api/proxy.js";
import { describeError } from "../errors.js";
import { packageVersion } from "../package-files.js";
import type { SecretRegistry } from "../redact.js";
import type { WatchEvent } from "./watch-events.js";
import { renderWebhookBody, signBody, type WebhookFormat } from "./webhook-payload.js";

export interface WebhookOptions {
  urls: readonly URL[];
  format: WebhookFormat;
  /** Signs each body (X-Pcsync-Signature) when given. */
  secret?: string | undefined;
  /** One attempt, from connecting to the end of the answer. */
  timeoutMs: number;
  /** Attempts per event, the first included. */
  attempts: number;
  /** The wait before the first retry; it doubles for each next one (with jitter), up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Events waiting per webhook at most. */
  maxQueue: number;
  secrets: SecretRegistry;
  /** Where a delivery that failed for good is told (one line, the URL shown as its origin only). */
  warn: (line: string) => void;
  proxyEnvironment?: ProxyEnvironment | undefined;
}

export const WEBHOOK_DEFAULTS = {
  timeoutMs: 10_000,
  attempts: 5,
  backoffMs: 1000,
  maxBackoffMs: 30_000,
  maxQueue: 100,
} as const satisfies Partial<WebhookOptions>;

export interface WebhookStats {
  delivered: number;
  failed: number;
  dropped: number;
}

/** A webhook as messages show it: scheme and host only (a Slack URL's path is its secret). */
export function displayWebhook(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

/** Why an attempt did not deliver, and whether another attempt may. */
interface AttemptFailure {
  reason: string;
  retry: boolean;
  /** The receiver's Retry-After, in ms. */
  afterMs?: number;
}

class WebhookQueue {
  readonly #url: URL;
  readonly #options: WebhookOptions;
  readonly #stats: WebhookStats;
  readonly #dispatcher: Dispatcher;
  readonly #pending: WatchEvent[] = [];
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;

  constructor(url: URL, options: WebhookOptions, stats: WebhookStats) {
    this.#url = url;
    this.#options = options;
    this.#stats = stats;
    const proxy =
      options.proxyEnvironment === undefined
        ? undefined
        : resolveProxy(url.origin, options.proxyEnvironment).route;
    this.#dispatcher = createDispatcher({
      origin: url.origin,
      connections: 1,
      connectTimeoutMs: options.timeoutMs,
      proxy,
    });
  }

  async whenIdle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  push(event: WatchEvent): void {
    if (this.#stop.signal.aborted) return;
    if (this.#pending.length >= this.#options.maxQueue) {
      const dropped = this.#pending.shift();
      this.#stats.dropped += 1;
      this.#options.warn(
        `webhook ${displayWebhook(this.#url)}: ${this.#options.maxQueue} events waiting; dropped the oldest (${dropped?.event})`,
      );
    }
    this.#pending.push(event);
    this.#kick();
  }

  #kick(): void {
    if (this.#running !== undefined) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      // An event pushed as the last delivery ended.
      if (this.#pending.length > 0 && !this.#stop.signal.aborted) this.#kick();
    });
  }

  async #drain(): Promise<void> {
    for (let event = this.#pending.shift(); event !== undefined; event = this.#pending.shift()) {
      if (this.#stop.signal.aborted) return;
      await this.#deliver(event);
    }
  }

  async #deliver(event: WatchEvent): Promise<void> {
    const { format, secret, secrets, attempts } = this.#options;
    const body = renderWebhookBody(event, format, secrets);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": `pcsync/${packageVersion()}`,
      "x-pcsync-event": event.event,
      // The same for every attempt, so that a receiver can tell a retry from a new event.
      "x-pcsync-delivery": randomUUID(),
    };
    if (secret !== undefined) headers["x-pcsync-signature"] = signBody(body, secret);
    let failure: AttemptFailure | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      failure = await this.#attempt(body, headers);
      if (failure === undefined) {
        this.#stats.delivered += 1;
        return;
      }
      if (!failure.retry || attempt === attempts || this.#stop.signal.aborted) break;
      await this.#sleep(failure.afterMs ?? this.#backoff(attempt));
    }
    this.#stats.failed += 1;
    this.#options.warn(
      `webhook ${displayWebhook(this.#url)}: ${event.event} not delivered: ${failure?.reason ?? "stopped"}`,
    );
  }

  async #attempt(body: string, headers: Record<string, string>): Promise<AttemptFailure | undefined> {
    const { timeoutMs } = this.#options;
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.#stop.signal]);
    try {
      const response = await request(this.#url, {
        method: "POST",
        headers,
        body,
        dispatcher: this.#dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      // The answer is not used, but is read to its end so the connection can be kept.
      await response.body.dump({ limit: 64 * 1024, signal });
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) return undefined;
      const retryAfter = Number(response.headers["retry-after"]);
      return {
        reason: `the receiver answered ${statusCode}`,
        // A 4xx other than 408 and 429 is the request's own fault: sending it again changes nothing.
        retry: statusCode >= 500 || statusCode === 429 || statusCode === 408,
        ...(Number.isFinite(retryAfter) && retryAfter >= 0
          ? { afterMs: Math.min(retryAfter * 1000, this.#options.maxBackoffMs) }
          : {}),
      };
    } catch (error) {
      const timedOut = signal.aborted && !this.#stop.signal.aborted;
      return {
        reason: timedOut ? `no answer within ${timeoutMs / 1000} s` : describeError(error),
        retry: true,
      };
    }
  }

  #backoff(attempt: number): number {
    const { backoffMs, maxBackoffMs } = this.#options;
    const base = Math.min(backoffMs * 2 ** (attempt - 1), maxBackoffMs);
    // Full jitter over the upper half: a fleet of watchers does not retry in step.
    return base / 2 + Math.random() * (base / 2);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      this.#stop.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          done();
        },
        { once: true },
      );
    });
  }

  async close(): Promise<void> {
    this.#stop.abort();
    this.#pending.length = 0;
    await this.whenIdle();
    await this.#dispatcher.close().catch(() => undefined);
  }
}

export class WebhookSender {
  readonly stats: WebhookStats = { delivered: 0, failed: 0, dropped: 0 };
  readonly #queues: WebhookQueue[];

  constructor(options: WebhookOptions) {
    this.#queues = options.urls.map((url) => new WebhookQueue(url, options, this.stats));
  }

  /** Queues the event for every webhook and returns at once. */
  send(event: WatchEvent): void {
    for (const queue of this.#queues) queue.push(event);
  }

  /**
   * Waits until every queued event is delivered or given up, for `deadlineMs` at most, then stops:
   * what is still queued is dropped. True when nothing was left.
   */
  async close(deadlineMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((done) => {
      timer = setTimeout(() => done(false), deadlineMs);
    });
    const drained = Promise.all(this.#queues.map((queue) => queue.whenIdle())).then(() => true);
    const finished = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    await Promise.all(this.#queues.map((queue) => queue.close()));
    return finished;
  }
}
