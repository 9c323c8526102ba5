// Webhook delivery against real node:http receivers on port 0: failing, slow, down, refusing.
// Sending never waits for the receiver; a retry carries the same delivery id.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type { PcsyncEvent } from "../../src/notify/event.js";
import { type WebhookOptions, WebhookSender } from "../../src/notify/webhook-sender.js";
import { SecretRegistry } from "../../src/redact.js";

type Handler = (request: IncomingMessage, response: ServerResponse, attempt: number) => void;

async function openReceiver(onFinished: (handler: () => Promise<void>) => void, handler: Handler) {
  const attempts: { delivery: string; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      attempts.push({ delivery: String(request.headers["x-pcsync-delivery"]), body });
      handler(request, response, attempts.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/T000/B000/token`),
    attempts,
  };
}

function event(name: PcsyncEvent["event"] = "drift_opened"): PcsyncEvent {
  return {
    event: name,
    project: "1",
    family: "plugin_configs",
    summary: { create: 1, update: 0, delete: 0, reorder: 0 },
    changes: [],
    at: "2026-01-01T00:00:00.000Z",
  };
}

function sender(urls: URL[], warnings: string[], options: Partial<WebhookOptions> = {}): WebhookSender {
  return new WebhookSender({
    urls,
    format: "json",
    // Long enough for a loaded machine: only the slow receiver's test runs into it.
    timeoutMs: 5_000,
    attempts: 3,
    backoffMs: 10,
    maxBackoffMs: 50,
    maxQueue: 10,
    secrets: new SecretRegistry(),
    warn: (line) => warnings.push(line),
    ...options,
  });
}

describe.concurrent("WebhookSender", () => {
  it("ends only the delivery a receiver's long Retry-After refuses: the next event is sent, and no word blames the API key", async ({
    onTestFinished,
  }) => {
    const receiver = await openReceiver(onTestFinished, (_request, response) =>
      response.writeHead(429, { "retry-after": "120" }).end(),
    );
    const warnings: string[] = [];
    const webhooks = sender([receiver.url], warnings);
    webhooks.send(event("drift_opened"));
    webhooks.send(event("drift_resolved"));
    expect(await webhooks.close(5_000)).toBe(true);
    // One attempt each: a wait beyond the cap is not slept through, nor does it hold the next event.
    expect(receiver.attempts).toHaveLength(2);
    expect(webhooks.stats).toEqual({ delivered: 0, failed: 2, dropped: 0 });
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) {
      expect(warning).toContain("429");
      expect(warning).not.toMatch(/API key|rate limit|the service/);
    }
  });

  it("retries a receiver answering 500, with the same delivery id, until it takes the event", async ({
    onTestFinished,
  }) => {
    const receiver = await openReceiver(onTestFinished, (_request, response, attempt) =>
      response.writeHead(attempt < 3 ? 500 : 204).end(),
    );
    const warnings: string[] = [];
    const webhooks = sender([receiver.url], warnings);
    webhooks.send(event());
    expect(await webhooks.close(5_000)).toBe(true);
    expect(receiver.attempts).toHaveLength(3);
    expect(new Set(receiver.attempts.map((attempt) => attempt.delivery)).size).toBe(1);
    expect(webhooks.stats).toEqual({ delivered: 1, failed: 0, dropped: 0 });
    expect(warnings).toEqual([]);
  });

  it("never holds up the sender: a slow receiver times out, is retried, and is reported by origin only", async ({
    onTestFinished,
  }) => {
    const receiver = await openReceiver(onTestFinished, () => undefined);
    const warnings: string[] = [];
    const webhooks = sender([receiver.url], warnings, { timeoutMs: 300 });
    // Sending only queues: nothing to wait for, and nothing has reached the receiver yet.
    expect(webhooks.send(event())).toBeUndefined();
    expect(webhooks.send(event("drift_resolved"))).toBeUndefined();
    expect(receiver.attempts).toHaveLength(0);
    expect(await webhooks.close(10_000)).toBe(true);
    expect(receiver.attempts).toHaveLength(6);
    expect(webhooks.stats.failed).toBe(2);
    expect(warnings[0]).toBe(
      `webhook http://${receiver.url.host}: drift_opened not delivered: no answer within 0.3 s`,
    );
    expect(warnings.join("\n")).not.toContain("token");
  });

  it("reports a receiver that is down, and does not retry one that refuses the event (4xx)", async ({
    onTestFinished,
  }) => {
    const refusing = await openReceiver(onTestFinished, (_request, response) =>
      response.writeHead(400).end(),
    );
    const closed = new URL("http://127.0.0.1:9/hook");
    const warnings: string[] = [];
    const webhooks = sender([refusing.url, closed], warnings);
    webhooks.send(event());
    expect(await webhooks.close(5_000)).toBe(true);
    expect(refusing.attempts).toHaveLength(1);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^webhook http:\/\/127\.0\.0\.1:\d+: drift_opened not delivered: the receiver answered 400$/,
      ),
    );
    expect(warnings).toContainEqual(
      expect.stringMatching(/^webhook http:\/\/127\.0\.0\.1:9: drift_opened not delivered: /),
    );
  });

  it("keeps order, drops the oldest when its queue is full, and stops at the deadline", async ({
    onTestFinished,
  }) => {
    const receiver = await openReceiver(onTestFinished, () => undefined);
    const warnings: string[] = [];
    const webhooks = sender([receiver.url], warnings, { maxQueue: 2, timeoutMs: 2_000, attempts: 1 });
    for (const name of ["drift_opened", "drift_changed", "drift_changed", "drift_resolved"] as const) {
      webhooks.send(event(name));
    }
    expect(webhooks.stats.dropped).toBe(1);
    expect(warnings[0]).toMatch(/2 events waiting; dropped the oldest \(drift_changed\)/);
    const started = performance.now();
    expect(await webhooks.close(200)).toBe(false);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(receiver.attempts.map((attempt) => (JSON.parse(attempt.body) as PcsyncEvent).event)).toEqual([
      "drift_opened",
    ]);
  });
});
