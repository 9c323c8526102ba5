// Delivers events to webhooks without ever holding up a cycle: a queue per webhook, in order, retried
// through the API client's HTTP stack and retry policy. A full queue drops its oldest event.

import { randomUUID } from "node:crypto";
import type { Dispatcher } from "undici";
import {
  connectForeignEndpoint,
  type ProxyEnvironment,
  type RetryContext,
  sendAttempt,
  sendWithRetry,
} from "../api/index.js";
import { describeError } from "../errors.js";
import { packageVersion } from "../package-files.js";
import type { SecretRegistry } from "../redact.js";
import type { PcsyncEvent } from "./event.js";
import { renderWebhookBody, signBody, type WebhookFormat } from "./webhook-payload.js";

export interface WebhookOptions {
  urls: readonly URL[];
  format: WebhookFormat;
  /** Signs each body (X-Pcsync-Signature) when given. */
  secret?: string | undefined;
  /** One attempt, from connecting to the end of the answer. */
  timeoutMs: number;
  /** The first included. */
  attempts: number;
  /** Doubles for each retry (full jitter) up to maxBackoffMs, which also caps a Retry-After. */
  backoffMs: number;
  maxBackoffMs: number;
  maxQueue: number;
  secrets: SecretRegistry;
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

/** Scheme and host only: a Slack URL's path is its secret. */
export function displayWebhook(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

// The answer is not used; a receiver's longer one is not a webhook receiver's.
const MAX_ANSWER_BYTES = 1024 * 1024;

class WebhookQueue {
  private readonly dispatcher: Dispatcher;
  private readonly pending: PcsyncEvent[] = [];
  private readonly stop = new AbortController();
  private readonly retry: RetryContext;
  private running: Promise<void> | undefined;

  constructor(
    private readonly url: URL,
    private readonly options: WebhookOptions,
    private readonly stats: WebhookStats,
  ) {
    ({ dispatcher: this.dispatcher, retry: this.retry } = connectForeignEndpoint({
      origin: url.origin,
      connections: 1,
      connectTimeoutMs: options.timeoutMs,
      attempts: options.attempts,
      backoffMs: options.backoffMs,
      maxBackoffMs: options.maxBackoffMs,
      proxyEnvironment: options.proxyEnvironment,
      signal: this.stop.signal,
    }));
  }

  async whenIdle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  push(event: PcsyncEvent): void {
    if (this.stop.signal.aborted) return;
    if (this.pending.length >= this.options.maxQueue) {
      const dropped = this.pending.shift();
      this.stats.dropped += 1;
      this.options.warn(
        `webhook ${displayWebhook(this.url)}: ${this.options.maxQueue} events waiting; dropped the oldest (${dropped?.event})`,
      );
    }
    this.pending.push(event);
    this.kick();
  }

  private kick(): void {
    if (this.running !== undefined) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      // An event pushed as the last delivery ended.
      if (this.pending.length > 0 && !this.stop.signal.aborted) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let event = this.pending.shift(); event !== undefined; event = this.pending.shift()) {
      if (this.stop.signal.aborted) return;
      await this.deliver(event);
    }
  }

  private async deliver(event: PcsyncEvent): Promise<void> {
    const { format, secret, secrets } = this.options;
    const body = renderWebhookBody(event, format, secrets);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": `pcsync/${packageVersion()}`,
      "x-pcsync-event": event.event,
      // The same for every attempt, so that a receiver can tell a retry from a new event.
      "x-pcsync-delivery": randomUUID(),
    };
    if (secret !== undefined) headers["x-pcsync-signature"] = signBody(body, secret);
    const failure = await this.send(body, headers);
    if (failure === undefined) {
      this.stats.delivered += 1;
      return;
    }
    this.stats.failed += 1;
    this.options.warn(`webhook ${displayWebhook(this.url)}: ${event.event} not delivered: ${failure}`);
  }

  /** Why it was not delivered, or undefined once it was. */
  private async send(body: string, headers: Record<string, string>): Promise<string | undefined> {
    const { timeoutMs } = this.options;
    try {
      const last = await sendWithRetry(this.retry, {
        failedRequest: { method: "POST", path: displayWebhook(this.url) },
        traceLabel: "",
        safety: "idempotent",
        // Sent again besides 429: the receiver's own failures, and its 408.
        retryStatus: (status) => status >= 500 || status === 408,
        send: () =>
          sendAttempt(this.dispatcher, {
            method: "POST",
            url: this.url,
            headers,
            body,
            headersTimeoutMs: timeoutMs,
            bodyTimeoutMs: timeoutMs,
            maxResponseBytes: MAX_ANSWER_BYTES,
            signal: this.stop.signal,
            deadlineMs: timeoutMs,
          }),
      });
      if (last.failure !== undefined) {
        return last.failure.kind === "timeout" && !this.stop.signal.aborted
          ? `no answer within ${timeoutMs / 1000} s`
          : last.failure.message;
      }
      return last.done ? undefined : `the receiver answered ${last.response.status}`;
    } catch (error) {
      return this.stop.signal.aborted ? "stopped" : describeError(error);
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    this.pending.length = 0;
    await this.whenIdle();
    await this.dispatcher.close().catch(() => undefined);
  }
}

export class WebhookSender {
  readonly stats: WebhookStats = { delivered: 0, failed: 0, dropped: 0 };
  private readonly queues: WebhookQueue[];

  constructor(options: WebhookOptions) {
    this.queues = options.urls.map((url) => new WebhookQueue(url, options, this.stats));
  }

  send(event: PcsyncEvent): void {
    for (const queue of this.queues) queue.push(event);
  }

  /** Waits at most `deadlineMs` for the queues to drain, then drops the rest; true when nothing was left. */
  async close(deadlineMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((done) => {
      timer = setTimeout(() => done(false), deadlineMs);
    });
    const drained = Promise.all(this.queues.map((queue) => queue.whenIdle())).then(() => true);
    const finished = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    await Promise.all(this.queues.map((queue) => queue.close()));
    return finished;
  }
}
