// How Django reads a form body's text: in the Content-Type's charset (else UTF-8), percent-escapes
// decoded as Python's unquote does; and header values split into their parameters.

/** Decodes bytes; `fatal` throws on bytes the charset cannot read, otherwise they become U+FFFD. */
export type Decode = (bytes: Uint8Array, fatal: boolean) => string;

// Python's names for ISO-8859-1 and ASCII. The WHATWG decoder behind TextDecoder reads both as
// windows-1252, which differs from Python's codecs in 0x80-0x9F and above 0x7F respectively.
const LATIN_1 = new Set(["latin-1", "latin1", "latin", "iso-8859-1", "iso8859-1", "8859", "cp819", "l1"]);
const ASCII = new Set(["ascii", "us-ascii", "646"]);

function decodeLatin1(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("latin1");
}

function decodeAscii(bytes: Uint8Array, fatal: boolean): string {
  if (fatal && bytes.some((byte) => byte > 0x7f)) throw new TypeError("not ASCII");
  return Array.from(bytes, (byte) => (byte > 0x7f ? "\uFFFD" : String.fromCharCode(byte))).join("");
}

export function decoderFor(charset: string | undefined): Decode {
  const name = (charset ?? "utf-8").trim().toLowerCase().replaceAll("_", "-");
  if (LATIN_1.has(name)) return decodeLatin1;
  if (ASCII.has(name)) return decodeAscii;
  let label = name;
  try {
    new TextDecoder(label);
  } catch {
    label = "utf-8";
  }
  // Python keeps a byte order mark as a character; TextDecoder would drop it.
  return (bytes, fatal) => new TextDecoder(label, { fatal, ignoreBOM: true }).decode(bytes);
}

/** ISO-8859-1 when it is not valid in its charset (Django's QueryDict). */
export function decodeBody(bytes: Uint8Array, decode: Decode): string {
  try {
    return decode(bytes, true);
  } catch {
    return decodeLatin1(bytes);
  }
}

function percentDecodeToBytes(ascii: string): Buffer {
  const unescaped = ascii.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
  return Buffer.from(unescaped, "latin1");
}

/** Python's unquote: each ASCII run becomes bytes read in the charset; other characters stay as they are. */
export function percentDecode(text: string, decode: Decode): string {
  if (!text.includes("%")) return text;
  // Runs of ASCII: everything but the code units from U+0080 up.
  return text.replace(/[^\u0080-\uFFFF]+/g, (run) => decode(percentDecodeToBytes(run), false));
}

export interface HeaderValue {
  /** Lower-cased and trimmed. */
  value: string;
  /** Lower-cased names; quoted values unquoted, RFC 2231 (`name*=utf-8''...`) values decoded. */
  params: Record<string, string>;
}

/** A `;` inside a quoted string does not count. */
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
      // An RFC 2231 value, `charset'language'percent-encoded`.
      const parts = value.split("'");
      if (parts.length === 3) value = percentDecode(parts[2] ?? "", decoderFor(parts[0]));
    }
    params[name] = value;
  }
  return { value: first.toLowerCase(), params };
}
