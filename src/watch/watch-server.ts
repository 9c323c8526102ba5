// The HTTP endpoints of `pcsync watch`: /metrics, /healthz (the cycles keep completing) and /readyz
// (a cycle has completed with a valid manifest). Nothing else.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { formatSeconds } from "../duration.js";
import { InputError } from "../input-error.js";
import { formatAddress, type ListenAddress } from "./listen-address.js";
import { monotonicNow } from "./monotonic-clock.js";
import type { LoopState } from "./watch-loop.js";
import { renderMetrics, type WatchMetrics } from "./watch-metrics.js";

export interface HealthState {
  loop: LoopState;
  intervalMs: number;
  /** The client's `longestRequestMs`: one request's every attempt timing out, with its retries. */
  requestBoundMs: number;
  /** On the loop's clock. */
  lastAttemptAt?: () => number | undefined;
  /** The loop's monotonic clock (tests). */
  now?: () => number;
  ready: () => boolean;
  notReadyReason: () => string;
}

/**
 * A hanging service holds a cycle for every timeout and retry (283 s at --interval 1m): a failed cycle
 * to come, not a watcher to restart (which forgets what heal learnt). Only a cycle without an answer
 * for longer than three intervals and one request's bound is stuck.
 */
function stuckReason(state: HealthState): string | undefined {
  const now = (state.now ?? monotonicNow)();
  const { loop, intervalMs } = state;
  const last = loop.lastCycleEndedAt ?? loop.startedAt;
  if (now - last <= 3 * intervalMs) return undefined;
  if (!loop.running || loop.cycleStartedAt === undefined) {
    return "no cycle has completed within three intervals";
  }
  // A cycle that keeps getting answers (a heal of thousands of writes) is alive however long it runs.
  const lastAttempt = state.lastAttemptAt?.();
  const progressedAt = Math.max(loop.cycleStartedAt, lastAttempt ?? Number.NEGATIVE_INFINITY);
  const stillMs = now - progressedAt;
  if (stillMs <= 3 * intervalMs + state.requestBoundMs) return undefined;
  const since = progressedAt === loop.cycleStartedAt ? "started" : "had its last answer";
  return `the cycle in progress ${since} ${formatSeconds(stillMs)} ago, longer than three intervals and the ${formatSeconds(state.requestBoundMs)} one request may take with its retries`;
}

const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: "the address is in use (another pcsync watch?)",
  EADDRNOTAVAIL: "this machine has no such address",
  EACCES: "permission denied (ports below 1024 need privileges)",
};

function listenError(address: ListenAddress, error: NodeJS.ErrnoException): InputError {
  const why = LISTEN_FAILURES[error.code ?? ""] ?? error.message ?? String(error);
  return new InputError("listen_failed", { where: formatAddress(address), why });
}

export interface WatchServer {
  /** Port 0 resolved (`http://127.0.0.1:9464`). */
  url: string;
  close(): Promise<void>;
}

export async function startWatchServer(
  address: ListenAddress,
  metrics: WatchMetrics,
  health: HealthState,
): Promise<WatchServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (request.method !== "GET" && request.method !== "HEAD") {
      response
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" })
        .end("method not allowed\n");
      return;
    }
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, { "content-type": type, "cache-control": "no-store" });
      response.end(request.method === "HEAD" ? undefined : body);
    };
    if (path === "/metrics") {
      renderMetrics(metrics).then(
        (text) => send(200, metrics.registry.contentType, text),
        (error: unknown) => send(500, "text/plain", `cannot render the metrics: ${String(error)}\n`),
      );
    } else if (path === "/healthz") {
      const stuck = stuckReason(health);
      send(stuck === undefined ? 200 : 503, "text/plain", stuck === undefined ? "ok\n" : `${stuck}\n`);
    } else if (path === "/readyz") {
      const ready = health.ready();
      send(ready ? 200 : 503, "text/plain", ready ? "ready\n" : `${health.notReadyReason()}\n`);
    } else send(404, "text/plain", "not found: this server has /metrics, /healthz and /readyz\n");
  });
  // A scraper's keep-alive connection must not keep the process alive after a stop.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(listenError(address, error)));
    server.listen(address.port, address.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    url: `http://${formatAddress({ host: address.host, port: bound.port })}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
