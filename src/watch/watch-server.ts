// The HTTP endpoints of `pcsync watch`: /metrics (Prometheus text format), /healthz (the cycles
// keep completing) and /readyz (a cycle has completed with a valid manifest). Nothing else.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InputError } from "../input-error.js";
import { formatAddress, type ListenAddress } from "./listen-address.js";
import { monotonicNow } from "./monotonic-clock.js";
import type { LoopState } from "./watch-loop.js";
import { renderMetrics, type WatchMetrics } from "./watch-metrics.js";

export interface HealthState {
  loop: LoopState;
  intervalMs: number;
  /** The loop's monotonic clock (tests): the loop's times are on it. */
  now?: () => number;
  /** A cycle has completed with a valid manifest. */
  ready: () => boolean;
  /** Why it is not ready, for the 503's body. */
  notReadyReason: () => string;
}

/** Healthy while a cycle has ended (or the loop started) within three intervals. */
function isHealthy(state: HealthState): boolean {
  const now = (state.now ?? monotonicNow)();
  const last = state.loop.lastCycleEndedAt ?? state.loop.startedAt;
  return now - last <= 3 * state.intervalMs;
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
  /** The address it listens on, port 0 resolved (`http://127.0.0.1:9464`). */
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
      const healthy = isHealthy(health);
      send(
        healthy ? 200 : 503,
        "text/plain",
        healthy ? "ok\n" : "no cycle has completed within three intervals\n",
      );
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
