// The HTTP side of the emulator: one request goes through faults, routing, authentication,
// throttling, project access, scopes, body parsing, the handler and persistence, in the order the
// real service checks them, and every outcome is written and logged in one place.

import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { authenticate, authorizeOperation, resolveProject } from "./auth.js";
import { HANDLERS } from "./dispatch.js";
import type { FaultInjector } from "./faults.js";
import type { HandlerContext, HandlerResult } from "./handler-types.js";
import { HttpError, methodNotAllowed, serverError, serviceUnavailable, throttled } from "./http-error.js";
import { renderLogMetrics } from "./log-metrics.js";
import type { LogStream } from "./log-stream.js";
import { capPageSize } from "./pagination.js";
import type { ProfileBehaviour } from "./profiles.js";
import { parseRequestBody, readBody } from "./request-body.js";
import { matchRoute, type Operation } from "./router.js";
import type { EmulatorStore } from "./store.js";
import type { RequestLogEntry } from "./types.js";

// Operations that read a JSON body; the others ignore whatever is sent.
const BODY_OPERATIONS: ReadonlySet<Operation> = new Set(["create", "update", "job", "rearrange"]);
// Operations that also take a form body, where the profile does.
const FORM_OPERATIONS: ReadonlySet<Operation> = new Set(["create", "update"]);

// A Host header is echoed into pagination links, so only plain host[:port] values are trusted.
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

export interface ServerDependencies {
  store: EmulatorStore;
  profile: ProfileBehaviour;
  faults: FaultInjector;
  /** Resolves once every change made so far is durable (immediately without a data file). */
  persist: () => Promise<void>;
  requestLog: RequestLogEntry[];
  log: ((line: string) => void) | undefined;
  reportInternalError: (error: unknown) => void;
  /** host:port of the server itself, for requests without a usable Host header. */
  ownHost: () => string;
  logStream: LogStream;
}

type Outcome =
  | { kind: "response"; result: HandlerResult }
  | { kind: "error"; error: HttpError }
  | { kind: "drop" }
  /** A proxy's page in front of the service: HTML, not the service's error body. */
  | { kind: "proxy"; status: 502 | 504 };

const PROXY_PAGES: Readonly<Record<502 | 504, string>> = {
  502: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n",
  504: "<html><head><title>504 Gateway Time-out</title></head><body><center><h1>504 Gateway Time-out</h1></center><hr><center>nginx</center></body></html>\n",
};

function requestUrlOf(request: IncomingMessage, target: string, ownHost: string): URL {
  const host = request.headers.host;
  return new URL(`http://${host !== undefined && PLAIN_HOST.test(host) ? host : ownHost}${target}`);
}

async function processRequest(
  deps: ServerDependencies,
  request: IncomingMessage,
  method: string,
  target: string,
): Promise<Outcome> {
  const { store, profile, faults } = deps;
  if (faults.latencyMs > 0) await sleep(faults.latencyMs);
  const proxyStatus = faults.proxyError();
  if (proxyStatus !== undefined) return { kind: "proxy", status: proxyStatus };
  if (faults.shouldFail503()) throw serviceUnavailable(faults.fail503RetryAfterSeconds);
  if (faults.shouldFail429()) throw throttled(faults.fail429WaitSeconds, profile.retryAfterHeader);
  const rawBody = await readBody(request);

  const route = matchRoute(method, target);
  const key = authenticate(request.headers.authorization, store.keys);
  const wait = faults.throttle(key.key, Date.now());
  if (wait !== undefined) throw throttled(wait, profile.retryAfterHeader);
  if (route.kind === "wrong-method") throw methodNotAllowed(method, route.allowed);
  const { operation, params } = route;
  const project =
    params.project === undefined ? undefined : resolveProject(params.project, key, store.projects);
  authorizeOperation(operation, key, profile);
  const body = BODY_OPERATIONS.has(operation)
    ? parseRequestBody(
        rawBody,
        request.headers["content-type"],
        profile.acceptsFormBodies && FORM_OPERATIONS.has(operation),
      )
    : undefined;

  const context: HandlerContext = {
    store,
    profile,
    key,
    project,
    params,
    body,
    requestUrl: capPageSize(requestUrlOf(request, target, deps.ownHost()), faults.maxPageSize),
    logStream: deps.logStream,
  };
  let result: HandlerResult;
  try {
    result = HANDLERS[operation](context);
  } finally {
    // Every answer waits until the state it shows is durable: a write's own change, and for a read
    // the writes of others it saw, which may still be in a commit. Also after a failure: a
    // posthog-2024 rearrange can fail halfway with changes already made.
    await deps.persist();
  }
  if (result.status < 300 && faults.shouldDropWrite(method)) return { kind: "drop" };
  if (result.status < 300 && operation === "create" && faults.shouldAnswer500AfterCommit())
    return { kind: "error", error: serverError() };
  return { kind: "response", result };
}

function writeResult(response: ServerResponse, result: HandlerResult): void {
  if (result.kind === "empty") {
    response.writeHead(result.status, result.status === 204 ? {} : { "content-length": "0" });
    response.end();
    return;
  }
  const [text, contentType] =
    result.kind === "json"
      ? [JSON.stringify(result.body), "application/json"]
      : [result.body, result.contentType];
  response.writeHead(result.status, {
    "content-type": contentType,
    "content-length": String(Buffer.byteLength(text)),
  });
  response.end(text);
}

function writeError(response: ServerResponse, error: HttpError): void {
  const text = JSON.stringify(error.body);
  response.writeHead(error.status, {
    ...error.headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    // An oversized body may not have been read to its end; do not reuse the connection.
    ...(error.status === 413 ? { connection: "close" } : {}),
  });
  response.end(text);
}

/** Serves one request to its end; never rejects. */
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
    const text = renderLogMetrics(deps.store, deps.logStream, deps.profile);
    response.writeHead(200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
    });
    response.end(text);
    return;
  }
  let outcome: Outcome;
  try {
    outcome = await processRequest(deps, request, method, target);
  } catch (error) {
    if (error instanceof HttpError) outcome = { kind: "error", error };
    else {
      deps.reportInternalError(error);
      outcome = { kind: "error", error: serverError() };
    }
  }
  let status: number;
  if (outcome.kind === "drop") {
    status = 0;
    request.socket.destroy();
  } else if (outcome.kind === "proxy") {
    status = outcome.status;
    const page = PROXY_PAGES[outcome.status];
    response.writeHead(status, {
      "content-type": "text/html",
      "content-length": String(Buffer.byteLength(page)),
    });
    response.end(page);
  } else if (outcome.kind === "error") {
    status = outcome.error.status;
    writeError(response, outcome.error);
  } else {
    status = outcome.result.status;
    writeResult(response, outcome.result);
  }
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
