// The HTTP side of the emulator: each request goes through faults, routing, auth, throttling, body
// and handler in the order the real service checks them; every outcome is written and logged here.

import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { authenticate, authorizeOperation, resolveProject } from "./auth.js";
import type { FaultInjector } from "./faults.js";
import { type HandlerResult, json, matchRoute } from "./handlers.js";
import { HttpError, methodNotAllowed, serverError, serviceUnavailable, throttled } from "./http-error.js";
import type { LogStream } from "./log-stream.js";
import { capPageSize } from "./pagination.js";
import { parseRequestBody, readBody } from "./request-body.js";
import type { EmulatorStore } from "./store.js";
import type { ProfileBehaviour, RequestLogEntry } from "./types.js";

// A Host header is echoed into pagination links, so only plain host[:port] values are trusted.
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

export interface ServerDependencies {
  store: EmulatorStore;
  profile: ProfileBehaviour;
  faults: FaultInjector;
  /** Resolves once every change made so far is durable. */
  persist: () => Promise<void>;
  requestLog: RequestLogEntry[];
  /** Internal errors go to stderr without it. */
  log: ((line: string) => void) | undefined;
  /** For requests without a usable Host header. */
  ownHost: () => string;
  logStream: LogStream;
}

type Outcome = HandlerResult & { headers?: Readonly<Record<string, string>> };

/** A proxy's page in front of the service: HTML, not the service's error body. */
function proxyPage(status: 502 | 504): Outcome {
  const title = status === 502 ? "502 Bad Gateway" : "504 Gateway Time-out";
  const text = `<html><head><title>${title}</title></head><body><center><h1>${title}</h1></center><hr><center>nginx</center></body></html>\n`;
  return { status, body: { text, contentType: "text/html" } };
}

function errorOutcome(error: HttpError): Outcome {
  // An oversized body may not have been read to its end; do not reuse the connection.
  const headers = error.status === 413 ? { ...error.headers, connection: "close" } : error.headers;
  return { ...json(error.status, error.body), headers };
}

async function processRequest(
  deps: ServerDependencies,
  request: IncomingMessage,
  method: string,
  target: string,
): Promise<Outcome | "drop"> {
  const { store, profile, faults } = deps;
  const latencyMs = faults.options.latencyMs ?? 0;
  if (latencyMs > 0) await sleep(latencyMs);
  const proxyStatus = faults.proxyError();
  if (proxyStatus !== undefined) return proxyPage(proxyStatus);
  if (faults.roll("fail503Rate")) throw serviceUnavailable(faults.options.fail503RetryAfterSeconds);
  if (faults.roll("fail429Rate"))
    throw throttled(faults.options.fail429WaitSeconds ?? 1, profile.retryAfterHeader);
  const rawBody = await readBody(request);
  // Held with its body read, so that it commits whether or not its client is still there.
  const lateMs = faults.lateWriteDelayMs(method);
  if (lateMs > 0) await sleep(lateMs);

  const route = matchRoute(method, target);
  const key = authenticate(request.headers.authorization, store.data.keys);
  const wait = faults.limiter.take(key.key, Date.now());
  if (wait !== undefined) throw throttled(wait, profile.retryAfterHeader);
  if (route.kind === "wrong-method") throw methodNotAllowed(method, route.allowed);
  const { operation, params } = route;
  const project =
    params.project === undefined ? undefined : resolveProject(params.project, key, store.data.projects);
  authorizeOperation(operation, key, profile);
  const contentType = request.headers["content-type"];
  const formBodies = profile.acceptsFormBodies && operation.body === "form";
  const body = operation.body === undefined ? undefined : parseRequestBody(rawBody, contentType, formBodies);
  const host = request.headers.host;
  const origin = host !== undefined && PLAIN_HOST.test(host) ? host : deps.ownHost();
  const requestUrl = capPageSize(new URL(`http://${origin}${target}`), faults.options.maxPageSize);

  let result: HandlerResult;
  try {
    const { logStream } = deps;
    result = operation.handle({ store, profile, key, project, params, body, requestUrl, logStream });
  } finally {
    // Every answer waits until the state it shows is durable: a write's own change, and for a read
    // the writes of others it saw, which may still be in a commit. Also after a failure: a
    // posthog-2024 rearrange can fail halfway with changes already made.
    await deps.persist();
  }
  if (result.status < 300 && faults.shouldDropWrite(method)) return "drop";
  // A create committed, then answered 500 instead of its record.
  if (result.status < 300 && operation.name === "create" && faults.roll("commitThen500Rate"))
    return errorOutcome(serverError());
  return result;
}

function write(response: ServerResponse, { status, body, headers = {} }: Outcome): void {
  // 204 carries no body and no length; another empty answer says its length is 0.
  const length =
    body === undefined ? (status === 204 ? undefined : "0") : String(Buffer.byteLength(body.text));
  response.writeHead(status, {
    ...headers,
    ...(body === undefined ? {} : { "content-type": body.contentType }),
    ...(length === undefined ? {} : { "content-length": length }),
  });
  response.end(body?.text);
}

const LOG_TYPES = ["ERROR", "WARN", "INFO", "LOG"] as const;

/**
 * /metrics: log entries per plugin config since its creation, by type, so that a rollout's
 * Prometheus gate can be tried against the emulator.
 */
function renderLogMetrics(store: EmulatorStore, logStream: LogStream): string {
  const { records, logEntries } = store.data;
  const stored = new Map<string, number>();
  for (const entry of logEntries) {
    const key = `${entry.plugin_config_id}/${entry.type.toUpperCase()}`;
    stored.set(key, (stored.get(key) ?? 0) + 1);
  }
  const lines = [
    "# HELP pcsync_emulator_log_entries_total Log entries each plugin config has logged since it was created, by type.",
    "# TYPE pcsync_emulator_log_entries_total counter",
  ];
  for (const record of records) {
    if (record.deleted) continue;
    for (const type of LOG_TYPES) {
      const filter = { types: new Set([type]), search: "", after: undefined, before: undefined };
      const synthesized = logStream.of(record, store.plugin(record.plugin), filter, { sinceCreation: true });
      const count = (synthesized?.count ?? 0) + (stored.get(`${record.id}/${type}`) ?? 0);
      // A config that logs nothing (disabled, a frontend app) has no series, as an exporter would.
      if (synthesized === undefined && count === 0) continue;
      lines.push(
        `pcsync_emulator_log_entries_total{project="${record.project}",config="${record.id}",type="${type}"} ${count}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Never rejects. */
export async function serveRequest(
  deps: ServerDependencies,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const started = performance.now();
  const method = request.method ?? "GET";
  const target = request.url ?? "/";
  // The emulator's own metrics, outside the API: no key, no faults, not in the request log.
  if (method === "GET" && target.split("?")[0] === "/metrics") {
    const text = renderLogMetrics(deps.store, deps.logStream);
    write(response, { status: 200, body: { text, contentType: "text/plain; version=0.0.4; charset=utf-8" } });
    return;
  }
  let outcome: Outcome | "drop";
  try {
    outcome = await processRequest(deps, request, method, target);
  } catch (error) {
    if (!(error instanceof HttpError)) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      const log = deps.log ?? ((line: string) => process.stderr.write(`${line}\n`));
      log(`pcsync emulator internal error: ${message}`);
    }
    outcome = errorOutcome(error instanceof HttpError ? error : serverError());
  }
  if (outcome === "drop") request.socket.destroy();
  else write(response, outcome);
  const status = outcome === "drop" ? 0 : outcome.status;
  deps.requestLog.push({
    method,
    path: target,
    status,
    hadAuth: request.headers.authorization !== undefined,
  });
  deps.log?.(
    `${method} ${target} ${status === 0 ? "dropped" : status} ${Math.round(performance.now() - started)}ms`,
  );
}
