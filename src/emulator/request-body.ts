// Reads and parses a request body, bounded in size. An empty body parses to undefined, which
// handlers treat as `{}`.

import type { IncomingMessage } from "node:http";
import { decoderFor, parseHeaderValue } from "./charset.js";
import { parseUrlencodedBody } from "./form-body.js";
import { type HttpError, parseError, payloadTooLarge, unsupportedMediaType } from "./http-error.js";
import { parseMultipartBody } from "./multipart-body.js";

export const MAX_BODY_BYTES = 1024 * 1024;

// Beyond this much, an oversized upload is cut off instead of drained.
const DRAIN_LIMIT_FACTOR = 64;

/**
 * An oversized body is a 413, its rest read and discarded first (up to a bound): a client still
 * sending gets a connection reset instead of the 413 if the server answers and closes early.
 */
export function readBody(request: IncomingMessage, limitBytes = MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error?: HttpError) => {
      if (settled) return;
      settled = true;
      if (error === undefined) resolve(Buffer.concat(chunks));
      else reject(error);
    };
    // The client aborted (or was killed) mid-body: its request, not an emulator fault.
    const ended = () => settle(parseError("the request ended before its body was complete"));
    // A client that went away before its body was read (killed mid-request, while the emulator
    // waited out its latency) sends no more events: settle now rather than hang close().
    if (request.destroyed) return ended();
    const declared = Number(request.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limitBytes * DRAIN_LIMIT_FACTOR) {
      return settle(payloadTooLarge(limitBytes));
    }
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limitBytes) chunks.push(chunk);
      else if (size > limitBytes * DRAIN_LIMIT_FACTOR) settle(payloadTooLarge(limitBytes));
    });
    request.on("end", () => settle(size > limitBytes ? payloadTooLarge(limitBytes) : undefined));
    request.on("error", ended);
    request.on("close", ended);
  });
}

function parseJson(raw: Buffer): unknown {
  const text = raw.toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw parseError(`JSON parse error - ${(error as Error).message}`);
  }
}

/** JSON also without a content type, as clients often omit it; with `formBodies` form bodies too. */
export function parseRequestBody(raw: Buffer, contentType: string | undefined, formBodies: boolean): unknown {
  if (raw.length === 0) return undefined;
  const { value: mediaType, params } = parseHeaderValue(contentType ?? "");
  if (mediaType === "" || mediaType === "application/json") return parseJson(raw);
  if (formBodies && mediaType === "application/x-www-form-urlencoded") {
    return parseUrlencodedBody(raw, decoderFor(params.charset));
  }
  if (formBodies && mediaType === "multipart/form-data") {
    return parseMultipartBody(raw, contentType ?? "", decoderFor(params.charset));
  }
  throw unsupportedMediaType(mediaType);
}
