// How values look in a rendered plan: field values, record names, `old → new`, and a compact word
// diff for long strings, as styled spans so each renderer decides how to show them.

// The word diff alone: the package's index loads every kind of diff.
import { diffWordsWithSpace } from "diff/lib/diff/word.js";
import { neutraliseInline, quoteServerText } from "../neutralise-server-text.js";
import type { FieldChange, FieldValue } from "../plan/types.js";

export type SpanStyle = "added" | "removed";

export interface Span {
  text: string;
  style?: SpanStyle;
}

export interface ValueOptions {
  maxValueChars: number;
}

const LONG_STRING = 60;
const CONTEXT_WORDS = 3;
/** Longest unchanged context kept on one side, for "words" without spaces. */
const CONTEXT_CHARS = 40;
/** Beyond this many edited tokens a word diff stops being compact; the values are shown instead. */
const MAX_EDIT_LENGTH = 200;
/** Longer strings are never word-diffed: the diff would cost more than it shows. */
const MAX_DIFF_INPUT = 20_000;

export const escapeControl = neutraliseInline;

/** Never splits a surrogate pair. */
export function truncateCodePoints(text: string, count: number): string {
  if (text.length <= count) return text;
  return Array.from(text).slice(0, count).join("");
}

/** A JSON literal, so spaces and odd characters stay visible. */
export function quoteString(text: string, options: ValueOptions): string {
  if (text.length <= options.maxValueChars) return quoteServerText(text);
  const cut = truncateCodePoints(text, options.maxValueChars);
  return `${quoteServerText(cut).slice(0, -1)}…" (${text.length} chars)`;
}

export function formatValue(value: FieldValue | undefined, options: ValueOptions): string {
  if (value === undefined) return "(unset)";
  if (typeof value === "string") return quoteString(value, options);
  return String(value);
}

export function formatName(name: string | null, options: ValueOptions): string {
  return name === null ? "(unnamed)" : quoteString(name, options);
}

/** `field: old → new`, or for long strings `field: "…unchanged [-old-]{+new+} words…" (word diff)`. */
export function formatFieldChange(field: string, change: FieldChange, options: ValueOptions): Span[] {
  const { from, to } = change;
  if (
    typeof from === "string" &&
    typeof to === "string" &&
    (from.length > LONG_STRING || to.length > LONG_STRING)
  ) {
    const spans = describeWordDiff(from, to, options);
    if (spans) return [{ text: `${field}: ` }, ...spans, { text: " (word diff)" }];
  }
  return [{ text: `${field}: ${formatValue(from, options)} → ${formatValue(to, options)}` }];
}

function escapeInner(text: string): string {
  return quoteServerText(text).slice(1, -1);
}

function describeWordDiff(from: string, to: string, options: ValueOptions): Span[] | undefined {
  if (from.length > MAX_DIFF_INPUT || to.length > MAX_DIFF_INPUT) return undefined;
  const parts = diffWordsWithSpace(from, to, { maxEditLength: MAX_EDIT_LENGTH });
  if (!parts) return undefined;
  const spans: Span[] = [{ text: '"' }];
  parts.forEach((part, index) => {
    if (part.added || part.removed) {
      const inner = escapeInner(truncateCodePoints(part.value, options.maxValueChars));
      const cut = part.value.length > options.maxValueChars ? "…" : "";
      spans.push(
        part.added
          ? { text: `{+${inner}${cut}+}`, style: "added" }
          : { text: `[-${inner}${cut}-]`, style: "removed" },
      );
      return;
    }
    const isFirst = index === 0;
    const isLast = index === parts.length - 1;
    spans.push({ text: escapeInner(compactContext(part.value, isFirst, isLast)) });
  });
  spans.push({ text: '"' });
  return spans;
}

/** Keeps a few words of unchanged text next to the changes around it, eliding the rest with `…`. */
function compactContext(text: string, isFirst: boolean, isLast: boolean): string {
  if (isFirst && isLast) return text;
  const tokens = text.match(/\s+|\S+/g) ?? [];
  const words = tokens.filter(isWord).length;
  const sides = isFirst || isLast ? 1 : 2;
  if (words <= CONTEXT_WORDS * sides && text.length <= CONTEXT_CHARS * sides) return text;
  const head = truncateCodePoints(leadingWords(tokens, CONTEXT_WORDS).join("").trimEnd(), CONTEXT_CHARS);
  const tail = clipStart(
    leadingWords([...tokens].reverse(), CONTEXT_WORDS)
      .reverse()
      .join("")
      .trimStart(),
  );
  if (isFirst) return `…${tail}`;
  if (isLast) return `${head}…`;
  return `${head}…${tail}`;
}

function isWord(token: string): boolean {
  return /\S/.test(token);
}

function leadingWords(tokens: readonly string[], count: number): string[] {
  let words = 0;
  const kept: string[] = [];
  for (const token of tokens) {
    if (isWord(token)) {
      if (words === count) break;
      words += 1;
    }
    kept.push(token);
  }
  return kept;
}

function clipStart(text: string): string {
  if (text.length <= CONTEXT_CHARS) return text;
  return Array.from(text).slice(-CONTEXT_CHARS).join("");
}
