// A fast reader for plain block YAML (indented maps and lists of one-line scalars): it tells a
// BlockBuilder what load-yaml.ts's full parse would, or gives up. Only time and memory differ.

import type { Position } from "./diagnostics.js";

export type ScalarValue = string | number | boolean | null;

/** The text uses YAML this reader does not handle, or has a problem the full parse reports. */
const GIVE_UP = Symbol("give up");

/**
 * Told in document order: a map or list comes before what it holds, and ends after it. A slot says
 * where a node goes (null: it is the document).
 */
export interface BlockBuilder<Container, Slot> {
  /** `offset`: the first key or `-`, or the `[`. */
  container(kind: "map" | "seq", offset: number, slot: Slot | null): Container;
  /** `end`: past the closing quote. */
  scalar(value: ScalarValue, offset: number, end: number, slot: Slot | null): void;
  entrySlot(map: Container, key: string, keyOffset: number, keyEnd: number): Slot;
  itemSlot(seq: Container): Slot;
  end(container: Container): void;
}

/** A value slot waiting for the next lines: after `key:` or `-` with nothing behind it. */
interface Pending<Slot> {
  indent: number;
  /** `key:` may be followed by a list at its own indentation. */
  isMapValue: boolean;
  /** Where an empty value sits: past the spaces behind the `:` or `-`. */
  emptyAt: number;
  slot: Slot;
}

interface Frame<Container> {
  indent: number;
  container: Container;
  isSeq: boolean;
  /** A map's keys so far: a duplicate is left to the full parse. */
  keys?: Set<string>;
}

// Characters that start something other than a plain scalar (YAML 1.2 indicators).
const INDICATORS = new Set([..."-?:,[]{}#&*!|>'\"%@`"]);
// Tabs, carriage returns, control characters and line separators have rules of their own.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNUSUAL_CHARACTERS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/;
const NULL_TEXT = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL_TEXT = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const INT_TEXT = /^[-+]?[0-9]+$/;
/** Longer keys are an error to the full parse (and never a manifest's). */
const MAX_KEY_LENGTH = 1000;
// Short keys are kept once per text, however often written (`name:` in every config); capped, so a
// text of a million different keys costs no more.
const MAX_SHARED_KEY_LENGTH = 40;
const MAX_SHARED_KEYS = 4096;

/**
 * Undefined means "parse it in full" (and drop what the builder made). Text deeper than `maxDepth`
 * is left to the full parse, which reports it.
 */
export function readBlockYaml<Container, Slot>(
  text: string,
  maxDepth: number,
  builder: BlockBuilder<Container, Slot>,
): { positionAt: (offset: number) => Position } | undefined {
  // Tabs and carriage returns have rules of their own; a BOM is stripped when files are read.
  if (UNUSUAL_CHARACTERS.test(text)) return undefined;
  try {
    return new BlockReader(text, maxDepth, builder).read();
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  }
}

function giveUp(): never {
  throw GIVE_UP;
}

class BlockReader<Container, Slot> {
  private readonly lineStarts: number[] = [];
  private readonly sharedKeys = new Map<string, string>();
  private lineStart = 0;
  private lineEnd = 0;
  private readonly stack: Frame<Container>[] = [];
  private pending: Pending<Slot> | undefined;
  private started = false;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
    private readonly builder: BlockBuilder<Container, Slot>,
  ) {}

  read(): { positionAt: (offset: number) => Position } {
    const { text } = this;
    let start = 0;
    while (start <= text.length) {
      const newline = text.indexOf("\n", start);
      const end = newline < 0 ? text.length : newline;
      this.lineStart = start;
      this.lineEnd = end;
      this.lineStarts.push(start);
      this.readLine();
      if (newline < 0) break;
      start = newline + 1;
    }
    if (this.pending !== undefined) this.fillEmpty(this.pending);
    for (let index = this.stack.length - 1; index >= 0; index--) {
      this.builder.end((this.stack[index] as Frame<Container>).container);
    }
    // Offsets fit 32 bits (files are capped far below): half the memory of the growing array.
    const lineStarts = Int32Array.from(this.lineStarts);
    return { positionAt: (offset) => positionIn(lineStarts, text.length, offset) };
  }

  private readLine(): void {
    const { text, lineStart, lineEnd } = this;
    let column = lineStart;
    while (column < lineEnd && text.charCodeAt(column) === 0x20) column++;
    if (column === lineEnd || text.charCodeAt(column) === 0x23 /* # */) return;
    const indent = column - lineStart;
    // Document markers and directives.
    if (indent === 0 && (text.startsWith("---", column) || text.startsWith("...", column))) giveUp();
    if (indent === 0 && text.charCodeAt(column) === 0x25 /* % */) giveUp();
    const isItem = this.isItemAt(column);

    const pending = this.pending;
    if (pending !== undefined) {
      this.pending = undefined;
      if (indent > pending.indent || (pending.isMapValue && indent === pending.indent && isItem)) {
        this.startNode(column, indent, pending.slot);
        return;
      }
      this.fillEmpty(pending);
    }
    if (!this.started) {
      if (indent !== 0) giveUp();
      this.started = true;
      this.startNode(column, indent, null);
      return;
    }
    // A list written at its key's indentation ends where the map's next key starts.
    for (let top = this.stack.at(-1); top !== undefined; top = this.stack.at(-1)) {
      const listUnderKey = top.indent === indent && top.isSeq && !isItem;
      if (top.indent <= indent && !listUnderKey) break;
      this.builder.end(top.container);
      this.stack.pop();
    }
    const frame = this.stack.at(-1);
    if (frame === undefined || frame.indent !== indent) giveUp();
    if (frame.isSeq) {
      if (!isItem) giveUp();
      this.readItem(frame, column);
    } else {
      if (isItem) giveUp();
      this.readEntry(frame, column, this.findKeyEnd(column));
    }
  }

  private isItemAt(column: number): boolean {
    return this.text.charCodeAt(column) === 0x2d /* - */ && this.isSpaceOrEnd(column + 1);
  }

  private isSpaceOrEnd(offset: number): boolean {
    return offset >= this.lineEnd || this.text.charCodeAt(offset) === 0x20;
  }

  /** After an indent or a `- `. */
  private startNode(column: number, indent: number, slot: Slot | null): void {
    if (this.isItemAt(column)) {
      const container = this.builder.container("seq", column, slot);
      const frame = this.push({ indent, container, isSeq: true });
      this.readItem(frame, column);
      return;
    }
    const keyEnd = this.findKeyEnd(column);
    if (keyEnd !== undefined) {
      const container = this.builder.container("map", column, slot);
      const frame = this.push({ indent, container, isSeq: false });
      this.readEntry(frame, column, keyEnd);
      return;
    }
    this.readScalar(column, slot);
  }

  private push(frame: Frame<Container>): Frame<Container> {
    if (this.stack.length + 1 >= this.maxDepth) giveUp();
    this.stack.push(frame);
    return frame;
  }

  private readItem(frame: Frame<Container>, column: number): void {
    const slot = this.builder.itemSlot(frame.container);
    const content = this.skipSpaces(column + 1);
    if (this.isEndOfContent(content)) {
      this.pending = { indent: frame.indent, isMapValue: false, emptyAt: content, slot };
      return;
    }
    this.startNode(content, content - this.lineStart, slot);
  }

  private readEntry(frame: Frame<Container>, column: number, keyEnd: number | undefined): void {
    if (keyEnd === undefined) giveUp();
    const key = this.keyText(column, keyEnd);
    // Merge keys and duplicates are errors, reported by the full parse with both positions.
    frame.keys ??= new Set();
    if (key === "<<" || frame.keys.has(key)) giveUp();
    frame.keys.add(key);
    const slot = this.builder.entrySlot(frame.container, key, column, keyEnd);
    const content = this.skipSpaces(keyEnd + 1);
    if (this.isEndOfContent(content)) {
      // yaml places an empty value past the spaces behind the `:`, at a comment if any.
      this.pending = { indent: frame.indent, isMapValue: true, emptyAt: content, slot };
      return;
    }
    // Only a scalar (or an empty `[]`, `{}`) may follow a key on its line.
    this.readScalar(content, slot);
  }

  /** Where the `:` of a `key:` at `column` is. */
  private findKeyEnd(column: number): number | undefined {
    const { text, lineEnd } = this;
    const first = text.charCodeAt(column);
    if (first === 0x22 /* " */ || first === 0x27 /* ' */) {
      const close = this.findQuoteEnd(column);
      if (close === undefined) giveUp();
      return close < lineEnd && text.charCodeAt(close) === 0x3a /* : */ && this.isSpaceOrEnd(close + 1)
        ? close
        : undefined;
    }
    for (let colon = column; colon < lineEnd; colon++) {
      if (text.charCodeAt(colon) === 0x3a && this.isSpaceOrEnd(colon + 1)) {
        if (colon - column > MAX_KEY_LENGTH) giveUp();
        return colon;
      }
    }
    return undefined;
  }

  private keyText(column: number, end: number): string {
    const first = this.text.charCodeAt(column);
    if (first === 0x22 || first === 0x27) return this.shared(this.quotedValue(column, end));
    const raw = this.text.slice(column, end);
    // As written, also for `1:` (a number to YAML, a project id here): what load-yaml.ts keeps.
    if (raw === "" || INDICATORS.has(raw.charAt(0)) || raw.endsWith(" ") || raw.includes(" #")) giveUp();
    return this.shared(raw);
  }

  private shared(key: string): string {
    if (key.length > MAX_SHARED_KEY_LENGTH) return key;
    const known = this.sharedKeys.get(key);
    if (known !== undefined) return known;
    if (this.sharedKeys.size < MAX_SHARED_KEYS) this.sharedKeys.set(key, key);
    return key;
  }

  /** To the end of the line (or a comment); also an empty `[]` or `{}`. */
  private readScalar(column: number, slot: Slot | null): void {
    const { text } = this;
    const first = text.charCodeAt(column);
    if (text.startsWith("[]", column) || text.startsWith("{}", column)) {
      if (!this.isEndOfContent(this.skipSpaces(column + 2), true)) giveUp();
      this.builder.end(this.builder.container(first === 0x5b ? "seq" : "map", column, slot));
      return;
    }
    // A document that is one scalar is no manifest: the full parse says why.
    if (slot === null) giveUp();
    if (first === 0x22 || first === 0x27) {
      const close = this.findQuoteEnd(column);
      if (close === undefined || !this.isEndOfContent(this.skipSpaces(close), true)) giveUp();
      this.builder.scalar(this.quotedValue(column, close), column, close, slot);
      return;
    }
    if (INDICATORS.has(text.charAt(column))) giveUp();
    let end = column;
    while (end < this.lineEnd && !(text.charCodeAt(end) === 0x23 && text.charCodeAt(end - 1) === 0x20)) end++;
    while (end > column && text.charCodeAt(end - 1) === 0x20) end--;
    const raw = text.slice(column, end);
    // `a: b: c` is an error.
    if (raw.includes(": ") || raw.endsWith(":")) giveUp();
    this.builder.scalar(plainValue(raw), column, end, slot);
  }

  /** Just past the closing quote, on this line. */
  private findQuoteEnd(column: number): number | undefined {
    const { text, lineEnd } = this;
    const quote = text.charAt(column);
    let index = column + 1;
    for (;;) {
      const close = text.indexOf(quote, index);
      if (close < 0 || close >= lineEnd) return undefined;
      // Escapes in double quotes have rules of their own.
      if (quote === '"' && text.slice(column, close).includes("\\")) giveUp();
      if (quote === "'" && text.charAt(close + 1) === "'") {
        index = close + 2;
        continue;
      }
      return close + 1;
    }
  }

  private quotedValue(column: number, end: number): string {
    const inner = this.text.slice(column + 1, end - 1);
    return this.text.charAt(column) === "'" ? inner.replaceAll("''", "'") : inner;
  }

  private skipSpaces(offset: number): number {
    let index = offset;
    while (index < this.lineEnd && this.text.charCodeAt(index) === 0x20) index++;
    return index;
  }

  /** The line ends at `offset`, or only a comment follows (which needs a space before its `#`). */
  private isEndOfContent(offset: number, afterValue = false): boolean {
    if (offset >= this.lineEnd) return true;
    if (this.text.charCodeAt(offset) !== 0x23) return false;
    // `"x"#c` is an error to YAML; `key:` + ` #c` is fine.
    return !afterValue || this.text.charCodeAt(offset - 1) === 0x20;
  }

  private fillEmpty(pending: Pending<Slot>): void {
    this.builder.scalar(null, pending.emptyAt, pending.emptyAt, pending.slot);
  }
}

/** As YAML 1.2's core schema reads it; numbers other than integers give up. */
function plainValue(raw: string): ScalarValue {
  const first = raw.charCodeAt(0);
  // Most scalars are names: a letter that starts no keyword says text without the regexes.
  const mayBeKeyword = raw.length <= 5 && "~nNtTfF".includes(raw.charAt(0));
  if (mayBeKeyword && NULL_TEXT.test(raw)) return null;
  if (mayBeKeyword && BOOL_TEXT.test(raw)) return first === 0x74 /* t */ || first === 0x54 /* T */;
  // Floats, hex, octal, .inf and .nan all start like an integer.
  if ((first >= 0x30 && first <= 0x39) || first === 0x2b || first === 0x2d || first === 0x2e) {
    if (INT_TEXT.test(raw)) return Number.parseInt(raw, 10);
    giveUp();
  }
  return raw;
}

/** 1-based, in UTF-16 units as yaml's LineCounter counts. */
function positionIn(lineStarts: Int32Array, length: number, offset: number): Position {
  const clamped = Math.max(0, Math.min(offset, length));
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((lineStarts[middle] ?? 0) <= clamped) low = middle;
    else high = middle - 1;
  }
  return { line: low + 1, col: clamped - (lineStarts[low] ?? 0) + 1 };
}
