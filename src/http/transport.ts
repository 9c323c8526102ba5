// Sends one HTTP request and reads its body within the bounds. Every failure becomes a
// TransportFailure saying whether a retry can help and whether the request may have been received.

import { type IncomingHttpHeaders, STATUS_CODES } from "node:http";
import { Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Dispatcher } from "undici";
import { describeError } from "../errors.js";
import { isTlsFailure, PROXY_TUNNEL_FAILURE } from "./dispatcher.js";

export interface AttemptRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  url: URL;
  headers: Record<string, string>;
  body?: string | undefined;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxResponseBytes: number;
  /** A webhook sender that closes. */
  signal?: AbortSignal | undefined;
  /** From connecting to the end of the body (a webhook's timeout). */
  deadlineMs?: number | undefined;
}

export interface AttemptResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Node gives some as arrays. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export type TransportFailureKind =
  | "unreachable"
  | "connection"
  | "timeout"
  | "too_large"
  | "headers_too_large"
  | "undecodable"
  | "proxy"
  | "other";

export class TransportFailure extends Error {
  declare readonly kind: TransportFailureKind;
  /** e.g. `ECONNRESET`; `timeout` or `too_large` for our own bounds. */
  declare readonly reason: string;
  /** The service may have received (and processed) the request. */
  declare readonly sent: boolean;
  declare readonly retryable: boolean;
  declare readonly phase: "connect" | "headers" | "body";
  /** Of a body that failed while being inflated. */
  declare readonly encoding?: string | undefined;
  /** Kind `proxy`: the proxy's refusal to open the tunnel. */
  declare readonly proxyStatus?: number | undefined;

  constructor({ description, ...details }: FailureDetails & { description: string }) {
    super(description);
    Object.assign(this, details);
  }
}

type FailureDetails = Pick<
  TransportFailure,
  "kind" | "reason" | "sent" | "retryable" | "phase" | "encoding" | "proxyStatus"
>;

/** Our own bound: the request was sent, and may be repeated. */
function timedOut(description: string, phase: "headers" | "body"): TransportFailure {
  return new TransportFailure({
    kind: "timeout",
    reason: "timeout",
    description,
    sent: true,
    retryable: true,
    phase,
  });
}

// Failures before a connection exists: the request never left, so even a POST may be repeated.
const UNREACHABLE = new Set(["ECONNREFUSED", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);
// Failures on an open connection: the request may have been processed.
const CONNECTION_LOST = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
]);

/** Resolves with any HTTP status; rejects only with a TransportFailure. */
export async function sendAttempt(dispatcher: Dispatcher, request: AttemptRequest): Promise<AttemptResponse> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  request.signal?.addEventListener("abort", abort, { once: true });
  const passed = { deadline: false, body: false };
  const bound = (ms: number | undefined, which: keyof typeof passed) =>
    ms === undefined
      ? undefined
      : setTimeout(() => {
          passed[which] = true;
          abort();
        }, ms);
  const deadline = bound(request.deadlineMs, "deadline");
  let bodyDeadline: NodeJS.Timeout | undefined;
  try {
    if (request.signal?.aborted) abort();
    let response: Dispatcher.ResponseData;
    try {
      response = await dispatcher.request({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        headersTimeout: request.headersTimeoutMs,
        // undici's body timeout is an idle timeout between chunks; the bound below caps the whole body.
        bodyTimeout: request.bodyTimeoutMs,
        signal: controller.signal,
      });
    } catch (error) {
      throw classifyFailure(error, "headers", request);
    }
    bodyDeadline = bound(request.bodyTimeoutMs, "body");
    try {
      const declaredLength = Number(response.headers["content-length"]);
      if (Number.isFinite(declaredLength) && declaredLength > request.maxResponseBytes) {
        discard(response.body);
        throw tooLarge();
      }
      const codings = contentCodings(response.headers["content-encoding"]);
      return {
        status: response.statusCode,
        headers: response.headers,
        body: await readBody(response, codings, request),
      };
    } catch (error) {
      if (error instanceof TransportFailure) throw error;
      if (passed.body)
        throw timedOut(`response body not complete within ${request.bodyTimeoutMs} ms`, "body");
      throw classifyFailure(error, "body", request);
    }
  } catch (error) {
    if (!passed.deadline) throw error;
    throw timedOut(`no answer within ${request.deadlineMs} ms`, "headers");
  } finally {
    clearTimeout(deadline);
    clearTimeout(bodyDeadline);
    request.signal?.removeEventListener("abort", abort);
  }
}

/** Drops a body nobody reads; destroying it unread emits an abort error that must not go unheard. */
function discard(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => undefined);
  body.destroy();
}

/** A body that arrived but cannot be used: retrying would get the same one. */
function badBody(kind: "too_large" | "undecodable", reason: string, description: string, encoding?: string) {
  return new TransportFailure({
    kind,
    reason,
    description,
    sent: true,
    retryable: false,
    phase: "body",
    encoding,
  });
}

function tooLarge(encoding?: string): TransportFailure {
  const description =
    encoding === undefined ? "response too large" : `${encoding} response inflates too large`;
  return badBody("too_large", "too_large", description, encoding);
}

const DECODERS = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
} as const;
type Coding = keyof typeof DECODERS;

// More layers than this is not a service's answer; each layer only multiplies the inflation.
const MAX_CODINGS = 2;

/** In the order they were applied; identity left out. */
function contentCodings(header: string | string[] | undefined): string[] {
  const value = Array.isArray(header) ? header.join(",") : (header ?? "");
  return value
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
}

/**
 * The memory bound counts inflated bytes, so a compression bomb stops at it like any other
 * oversized answer.
 */
async function readBody(
  response: Dispatcher.ResponseData,
  codings: readonly string[],
  request: AttemptRequest,
): Promise<Buffer> {
  const shown = codings.length === 0 ? undefined : codings.join(", ");
  const unsupported = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unsupported !== undefined || codings.length > MAX_CODINGS) {
    discard(response.body);
    throw badBody(
      "undecodable",
      "content_encoding",
      unsupported === undefined
        ? `the body is encoded ${codings.length} times (${shown}), more than pcsync undoes`
        : `the body is encoded with ${JSON.stringify(unsupported)}, which pcsync cannot decode`,
    );
  }
  if (codings.length === 0) return readPlainBody(response.body, request.maxResponseBytes);
  const decoders = [...codings].reverse().map((coding) => DECODERS[coding as Coding]());
  const chunks: Buffer[] = [];
  let received = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > request.maxResponseBytes) return callback(tooLarge(shown));
      chunks.push(chunk);
      callback();
    },
  });
  let encodedBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      encodedBytes += chunk.length;
      callback(null, chunk);
    },
  });
  try {
    await pipeline([response.body, counter, ...decoders, sink]);
  } catch (error) {
    if (error instanceof TransportFailure) throw error;
    // An empty body (a 204, posthog-2024's empty job answer) stays empty whatever its header says.
    if (encodedBytes === 0 && errorCode(error) === "Z_BUF_ERROR") return Buffer.alloc(0);
    const code = errorCode(error);
    // zlib's own failures: the bytes arrived but are not what their encoding says.
    if (shown !== undefined && (code.startsWith("Z_") || code.startsWith("ERR__ERROR_"))) {
      const why = error instanceof Error ? error.message : code;
      throw badBody("undecodable", code, `the ${shown}-encoded body is corrupt (${why})`, shown);
    }
    throw error;
  }
  return Buffer.concat(chunks);
}

/** Most bodies: without the streams of a coded one. Leaving the loop early destroys the body. */
async function readPlainBody(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of body) {
    received += chunk.length;
    if (received > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, received);
}

function classifyFailure(
  error: unknown,
  phase: "headers" | "body",
  request: AttemptRequest,
): TransportFailure {
  const code = errorCode(error);
  if (code === PROXY_TUNNEL_FAILURE) return classifyProxyFailure(error, request);
  const description = describe(error, code);
  const fail = (
    details: Omit<FailureDetails, "reason" | "phase">,
    at: FailureDetails["phase"] = phase,
    text = description,
  ) => new TransportFailure({ ...details, reason: code || "unknown", description: text, phase: at });
  if (code === "UND_ERR_CONNECT_TIMEOUT")
    return fail({ kind: "timeout", sent: false, retryable: true }, "connect");
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "ETIMEDOUT") {
    const at = code === "UND_ERR_HEADERS_TIMEOUT" ? "headers" : phase;
    const limitMs = at === "headers" ? request.headersTimeoutMs : request.bodyTimeoutMs;
    return fail({ kind: "timeout", sent: true, retryable: true }, at, `${description} (limit ${limitMs} ms)`);
  }
  if (UNREACHABLE.has(code)) return fail({ kind: "unreachable", sent: false, retryable: true }, "connect");
  // A host name that does not resolve, or a certificate that does not verify, will not get better.
  if (code === "ENOTFOUND" || isTlsFailure(code))
    return fail({ kind: "unreachable", sent: false, retryable: false }, "connect");
  if (CONNECTION_LOST.has(code) || code.startsWith("HPE_"))
    return fail({ kind: "connection", sent: true, retryable: true });
  // The same server will send the same headers again: not worth a retry.
  if (code === "UND_ERR_HEADERS_OVERFLOW")
    return fail({ kind: "headers_too_large", sent: true, retryable: false });
  if (code === "UND_ERR_INVALID_ARG")
    return fail({ kind: "other", sent: false, retryable: false }, "connect");
  return fail({ kind: "other", sent: true, retryable: false });
}

const PROXY_REFUSAL = /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/;

/** Nothing reached the service: even a POST may be sent again where a retry can help. */
function classifyProxyFailure(error: unknown, request: AttemptRequest): TransportFailure {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = errorCode(cause);
  const refusal = PROXY_REFUSAL.exec(cause instanceof Error ? cause.message : "");
  const base = { kind: "proxy", sent: false, phase: "connect" } as const;
  if (refusal) {
    const status = Number(refusal[1]);
    return new TransportFailure({
      ...base,
      reason: `proxy_${status}`,
      description: `${status} ${STATUS_CODES[status] ?? ""}`.trim(),
      retryable: status === 502 || status === 503 || status === 504,
      proxyStatus: status,
    });
  }
  const timedOut = code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT";
  return new TransportFailure({
    ...base,
    reason: code || "unknown",
    description: timedOut
      ? `no answer within ${request.headersTimeoutMs} ms`
      : describe(cause ?? error, code),
    retryable: timedOut || UNREACHABLE.has(code) || CONNECTION_LOST.has(code),
  });
}

function errorCode(error: unknown): string {
  for (let current = error, depth = 0; current && depth < 4; depth += 1) {
    if (typeof current !== "object") break;
    if ("code" in current && typeof current.code === "string") return current.code;
    current = "cause" in current ? current.cause : undefined;
  }
  return "";
}

function describe(error: unknown, code: string): string {
  const message = oneLine(describeError(error));
  if (code === "" || message.includes(code)) return message || code || "unknown error";
  return `${code}: ${message}`;
}

// OpenSSL's messages run over two lines and name its source files:
// `80FC...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/...:350:\n`.
const OPENSSL_MESSAGE = /error:[0-9A-F]+:[^:]*routines:[^:]*:([^:]+):/;

/** OpenSSL's reduced to its reason, anything else to its first line. */
function oneLine(message: string): string {
  const openssl = OPENSSL_MESSAGE.exec(message);
  if (openssl?.[1] !== undefined) return openssl[1].trim();
  return (message.split("\n").find((line) => line.trim() !== "") ?? "").trim();
}
