// How `owner: NAME` marks the records it writes: at the end of `description` (the one free-text field),
// in a form the service's trimming cannot touch, giving back the user's text byte for byte:
//
//   null                 ->  [pcsync owner=NAME]
//   "Adds country "      ->  Adds country \n\n[pcsync owner=NAME]
//   "", " indented", "\"x"  ->  JSON string (quoted), then \n\n[pcsync owner=NAME]
//
// A text is written as it is when it is not empty and starts with neither white space nor `"`;
// otherwise it is written as a JSON string, so that it starts and ends with `"`. Only the last
// mark is the record's: a text that itself ends in a mark comes back as written.

import { parseJson } from "./files/read-json-file.js";

export const OWNER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,40}$/;

/** The service's limit on `description`. */
export const DESCRIPTION_MAX_LENGTH = 1000;

const MARK_SEPARATOR = "\n\n";
export const MARK_START = "[pcsync owner=";
const MARK_AT_END = /(^|\n\n)\[pcsync owner=([A-Za-z0-9_.-]{1,40})\]$/;

// White space the service may trim: JavaScript's \s and what Python's str.strip() also removes
// (the information separators U+001C to U+001F, and U+0085).
// biome-ignore lint/suspicious/noControlCharactersInRegex: those separators are white space to Python.
const LEADING_SPACE = /^[\s\u001c-\u001f\u0085]/;

export interface ReadMark {
  /** Null when it carries none (or a broken one). */
  owner: string | null;
  text: string | null;
}

function markOf(owner: string): string {
  return `${MARK_START}${owner}]`;
}

function needsQuotes(text: string): boolean {
  return text === "" || LEADING_SPACE.test(text) || text.startsWith('"');
}

export function writeMark(text: string | null, owner: string): string {
  if (text === null) return markOf(owner);
  const body = needsQuotes(text) ? JSON.stringify(text) : text;
  return `${body}${MARK_SEPARATOR}${markOf(owner)}`;
}

/** A quoted text that does not parse back, or would not have been quoted, is no mark pcsync wrote. */
export function readMark(description: string | null | undefined): ReadMark {
  if (typeof description !== "string") return { owner: null, text: description ?? null };
  const match = MARK_AT_END.exec(description);
  if (match === null) return { owner: null, text: description };
  const owner = match[2] as string;
  if (match.index === 0 && match[1] === "") return { owner, text: null };
  const body = description.slice(0, match.index);
  if (!body.startsWith('"')) {
    // Written as it is only when it needed no quotes: else the service or a hand changed it.
    return needsQuotes(body) ? { owner: null, text: description } : { owner, text: body };
  }
  const text = parseQuoted(body);
  return text === undefined || !needsQuotes(text) ? { owner: null, text: description } : { owner, text };
}

function parseQuoted(body: string): string | undefined {
  if (!body.endsWith('"') || body.length < 2) return undefined;
  const { value } = parseJson(body);
  return typeof value === "string" ? value : undefined;
}

export function looksMarked(text: string): boolean {
  return readMark(text).owner !== null;
}

/** In characters as the service counts them. */
export function markedLength(text: string | null, owner: string): number {
  return [...writeMark(text, owner)].length;
}
