// Parses a multipart/form-data body as the real serializer would. Where Django is lenient about a
// malformed body, this is a 400: a client sending one has a bug to find.

import { type Decode, parseHeaderValue } from "./charset.js";
import { FormBody, UploadedFile } from "./form-body.js";
import { parseError } from "./http-error.js";

/** Django's MAX_TOTAL_HEADER_SIZE for the headers of one part. */
const MAX_PART_HEADER_BYTES = 1024;
// Django's check of the boundary parameter: printable ASCII, at most 201 characters, no trailing space.
const VALID_BOUNDARY = /^[ -~]{0,200}[!-~]$/;

const [CR, LF, DASH, SPACE, TAB] = [0x0d, 0x0a, 0x2d, 0x20, 0x09];
const CRLF = Buffer.from("\r\n");
const HEADERS_END = Buffer.from("\r\n\r\n");

function multipartError(detail: string) {
  // Django REST framework's wording for its MultiPartParser failing.
  return parseError(`Multipart form parse error - ${detail}`);
}

interface Delimiter {
  /** The CRLF before its dashes included. */
  start: number;
  /** Where a part, or (after the closing delimiter) the epilogue starts. */
  end: number;
  closing: boolean;
}

/** The next `--boundary` at the start of a line, followed by `--` or by optional spaces and CRLF. */
function findDelimiter(body: Buffer, dashBoundary: Buffer, from: number): Delimiter | undefined {
  for (
    let index = body.indexOf(dashBoundary, from);
    index !== -1;
    index = body.indexOf(dashBoundary, index + 1)
  ) {
    const atLineStart = index === 0 || (body[index - 2] === CR && body[index - 1] === LF);
    if (!atLineStart) continue;
    const start = Math.max(0, index - 2);
    let after = index + dashBoundary.length;
    if (body[after] === DASH && body[after + 1] === DASH) return { start, end: after + 2, closing: true };
    while (body[after] === SPACE || body[after] === TAB) after += 1;
    if (body[after] === CR && body[after + 1] === LF) return { start, end: after + 2, closing: false };
    // The boundary text inside a line of content: not a delimiter.
  }
  return undefined;
}

function splitParts(body: Buffer, boundary: string): Buffer[] {
  const dashBoundary = Buffer.from(`--${boundary}`, "latin1");
  let delimiter = findDelimiter(body, dashBoundary, 0);
  if (delimiter === undefined) throw multipartError("the body has no boundary line.");
  const parts: Buffer[] = [];
  while (!delimiter.closing) {
    const next: Delimiter | undefined = findDelimiter(body, dashBoundary, delimiter.end);
    if (next === undefined) throw multipartError("the body ends before its closing boundary.");
    parts.push(body.subarray(delimiter.end, Math.max(delimiter.end, next.start)));
    delimiter = next;
  }
  return parts;
}

interface Part {
  disposition: Record<string, string> | undefined;
  /** "" without one (what Django gives an uploaded file). */
  contentType: string;
  content: Buffer;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function parsePart(part: Buffer): Part {
  // No headers at all: the part is its content after an empty line (or nothing).
  if (part.length === 0) return { disposition: undefined, contentType: "", content: part };
  const headersEnd = part.subarray(0, 2).equals(CRLF) ? 0 : part.indexOf(HEADERS_END);
  if (headersEnd === -1 || headersEnd > MAX_PART_HEADER_BYTES) {
    throw multipartError("the headers of a part do not end with an empty line within 1024 bytes.");
  }
  let disposition: Record<string, string> | undefined;
  let contentType = "";
  // latin1 keeps the bytes as they are, for the UTF-8 check of each line.
  for (const line of part.subarray(0, headersEnd).toString("latin1").split("\r\n")) {
    let text: string;
    try {
      text = UTF8.decode(Buffer.from(line, "latin1"));
    } catch {
      continue; // Django skips a header line that is not UTF-8.
    }
    const colon = text.indexOf(":");
    const header = colon === -1 ? "" : text.slice(0, colon).trim().toLowerCase();
    if (header === "content-type") contentType = parseHeaderValue(text.slice(colon + 1)).value;
    if (header !== "content-disposition") continue;
    disposition = parseHeaderValue(text.slice(colon + 1)).params;
  }
  return {
    disposition,
    contentType,
    content: part.subarray(headersEnd === 0 ? CRLF.length : headersEnd + HEADERS_END.length),
  };
}

/**
 * `contentType` is the header as sent: Django checks its `multipart/` prefix as is (so
 * `Multipart/Form-Data` fails there) and takes the boundary from it.
 */
export function parseMultipartBody(body: Buffer, contentType: string, decode: Decode): FormBody {
  if (!contentType.startsWith("multipart/")) throw multipartError(`Invalid Content-Type: ${contentType}`);
  const boundary = parseHeaderValue(contentType).params.boundary;
  if (boundary === undefined || !VALID_BOUNDARY.test(boundary)) {
    throw multipartError(`Invalid boundary in multipart: ${boundary ?? "None"}`);
  }
  const form = new FormBody();
  for (const part of splitParts(body, boundary)) {
    const { disposition, contentType, content } = parsePart(part);
    const name = disposition?.name?.trim();
    // A part with a non-empty filename is a file; a part without a name is skipped.
    if (disposition?.filename) {
      if (name === undefined) continue;
      form.addFile(name, new UploadedFile(disposition.filename, content.length, contentType));
      continue;
    }
    form.countField();
    if (name !== undefined) form.addField(name, decode(content, false));
  }
  return form;
}
