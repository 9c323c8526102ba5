// Splits a header value such as a Content-Type or a part's Content-Disposition into its main value
// and parameters, the way the real service (Django) reads them.

import { decoderFor, percentDecode } from "./charset.js";

export interface HeaderValue {
  /** Lower-cased and trimmed: `multipart/form-data`, `form-data`. */
  value: string;
  /** Lower-cased names; quoted values unquoted, RFC 2231 (`name*=utf-8''...`) values decoded. */
  params: Record<string, string>;
}

/** The `;`-separated pieces, a `;` inside a quoted string not counting. */
function splitPieces(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === "\\" && quoted) index += 1;
    else if (char === '"') quoted = !quoted;
    else if (char === ";" && !quoted) {
      pieces.push(text.slice(start, index));
      start = index + 1;
    }
  }
  pieces.push(text.slice(start));
  return pieces.map((piece) => piece.trim());
}

/** An RFC 2231 value, `charset'language'percent-encoded`. */
function decodeExtendedValue(value: string): string {
  const [charset, , encoded = ""] = value.split("'");
  return percentDecode(encoded, decoderFor(charset));
}

export function parseHeaderValue(header: string): HeaderValue {
  const [first = "", ...rest] = splitPieces(header);
  const params: Record<string, string> = {};
  for (const piece of rest) {
    const equals = piece.indexOf("=");
    if (equals === -1) continue;
    let name = piece.slice(0, equals).trim().toLowerCase();
    let value = piece.slice(equals + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replaceAll("\\\\", "\\").replaceAll('\\"', '"');
    }
    if (name.endsWith("*")) {
      name = name.slice(0, -1);
      if (value.split("'").length === 3) value = decodeExtendedValue(value);
    }
    params[name] = value;
  }
  return { value: first.toLowerCase(), params };
}
