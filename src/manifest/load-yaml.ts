// Reads one YAML text (a manifest or a var file) into a BlockBuilder, told where every key and value
// is: plain block YAML with the fast reader, anything else with the yaml library.

import { plural } from "../plural.js";
import type { Alias, Node, Scalar } from "../vendor/yaml.js";
import type { Position, YamlProblem } from "./diagnostics.js";
import { type BlockBuilder, readBlockYaml, type ScalarValue } from "./parse-block-yaml.js";
import { yamlLibrary } from "./yaml-library.js";

export interface ParsedYaml {
  errors: YamlProblem[];
  warnings: YamlProblem[];
  /** A syntax error, an alias bomb, too deep; a duplicate key, say, leaves a tree worth checking. */
  fatal: boolean;
  positionAt: (offset: number) => Position;
}

// A manifest needs 6. Deep nesting and alias bombs are refused: a manifest never needs them, an
// attacker would.
const MAX_DEPTH = 32;

/** Or one per character of the text if more: a large manifest may alias a value in each config. */
const MAX_ALIAS_EXPANSION = 10_000;

const MAX_PROBLEMS = 200;

// yaml's error codes, reworded to say what to do.
const PARSER_HINTS: Partial<Record<string, string>> = {
  TAB_AS_INDENT: "replace the tab with spaces",
  MULTIPLE_DOCS: "a manifest file holds one YAML document; remove the `---` or split the file in two",
  BAD_INDENT: "check the indentation: items of one block must line up",
  MULTILINE_IMPLICIT_KEY: "a key must fit on one line; is a `:` missing, or a quote not closed?",
  BLOCK_AS_IMPLICIT_KEY: "a key must fit on one line; is a `:` missing, or a quote not closed?",
  MISSING_CHAR: "close the quote or bracket opened before this point",
  UNEXPECTED_TOKEN:
    "check the syntax here; quote the value if it contains `: `, `#` or starts with a special character",
  BAD_SCALAR_START: "quote this value: it starts with a character YAML reserves",
  BAD_DQ_ESCAPE: "invalid escape in a double-quoted string; use single quotes or write `\\\\`",
  KEY_OVER_1024_CHARS: "keys are limited to 1024 characters",
  DUPLICATE_KEY: "remove one of the duplicate keys",
};

/** What the fast reader gave up on is read again into a fresh builder. */
export function parseYaml<Built extends BlockBuilder<unknown, unknown>>(
  text: string,
  makeBuilder: () => Built,
): ParsedYaml & { built: Built } {
  const fast = makeBuilder();
  const read = readBlockYaml(text, MAX_DEPTH, fast);
  if (read !== undefined) return { built: fast, errors: [], warnings: [], fatal: false, ...read };
  const built = makeBuilder();
  return { built, ...parseYamlInFull(text, built) };
}

/** The reference that readBlockYaml must agree with. */
export function parseYamlInFull<Container, Slot>(
  text: string,
  builder: BlockBuilder<Container, Slot>,
): ParsedYaml {
  const { LineCounter, parseDocument } = yamlLibrary();
  const lineCounter = new LineCounter();
  const positionAt = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(Math.max(0, Math.min(offset, text.length)));
    return { line, col };
  };
  // Duplicate keys are found below, with both positions; yaml's own check would only name one.
  const document = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: false,
    version: "1.2",
  });

  // Garbage can yield an error per character; the first ones are all a person reads.
  const errors = withoutCascades(document.errors, text, positionAt).slice(0, MAX_PROBLEMS);
  const warnings = document.warnings.slice(0, MAX_PROBLEMS).map((warning) => ({
    position: positionAt(warning.pos[0]),
    message:
      warning.code === "TAG_RESOLVE_FAILED"
        ? `${warning.message}; the tag is ignored and the value read as a string (remove the tag)`
        : warning.message,
  }));
  // A document that does not parse would produce a misleading tree of fragments.
  if (errors.length > 0) return { errors, warnings, fatal: true, positionAt };

  const converter = new TreeConverter(document, text, positionAt, errors, builder);
  const contents = document.contents;
  // Only comments: nothing to build.
  const isEmpty =
    contents === null ||
    (yamlLibrary().isScalar(contents) &&
      contents.value === null &&
      text.slice(rangeStart(contents), rangeEnd(contents)).trim() === "");
  if (!isEmpty) converter.convert(contents, 0, null);
  return { errors, warnings, fatal: converter.truncated, positionAt };
}

/** Lines indented with a tab, shown one by one up to this many; the rest in one more error. */
const MAX_TAB_LINES = 5;

/**
 * One mistake makes the parser trip again and again after it, so: errors at one place are one error;
 * each line indented with a tab is one error, and the parser's errors from the first such line on
 * (its echoes) are dropped: any that were not come back once the tabs are gone.
 */
function withoutCascades(
  parserErrors: readonly { code: string; message: string; pos: readonly [number, number] }[],
  text: string,
  positionAt: (offset: number) => Position,
): YamlProblem[] {
  const tabLines = linesIndentedWithTabs(text);
  const firstTabLine = tabLines[0]?.line ?? Number.POSITIVE_INFINITY;
  const problems: YamlProblem[] = [];
  const places = new Set<string>();
  for (const error of parserErrors) {
    const position = positionAt(error.pos[0]);
    if (position.line >= firstTabLine) continue;
    const place = `${position.line}:${position.col}`;
    if (places.has(place)) continue;
    places.add(place);
    problems.push({ position, message: describeParserError(error.code, error.message) });
  }
  // Tabs the parser did not trip over (in a flow collection, in a block scalar's text) are fine.
  if (problems.length === parserErrors.length) return problems;
  for (const tab of tabLines.slice(0, MAX_TAB_LINES)) {
    problems.push({
      position: tab,
      message:
        "a tab character indents this line; YAML allows only spaces in indentation: replace the tab with spaces",
    });
  }
  const more = tabLines.slice(MAX_TAB_LINES);
  const [next] = more;
  if (next !== undefined) {
    const lines = more.map((tab) => tab.line);
    const shown = lines.length > 10 ? `${lines.slice(0, 10).join(", ")}, ...` : lines.join(", ");
    problems.push({
      position: next,
      message: `tabs also indent ${plural(lines.length, "more line")} (${shown}); replace every indenting tab with spaces (an editor's "convert indentation to spaces" does it)`,
    });
  }
  return problems;
}

/** Not blank, not only a comment; at the first tab. */
function linesIndentedWithTabs(text: string): Position[] {
  const found: Position[] = [];
  for (const [index, line] of text.split(/\r\n|\r|\n/).entries()) {
    const indentation = /^[ \t]*/.exec(line)?.[0] ?? "";
    const rest = line.slice(indentation.length);
    if (!indentation.includes("\t") || rest === "" || rest.startsWith("#")) continue;
    found.push({ line: index + 1, col: indentation.indexOf("\t") + 1 });
  }
  return found;
}

function describeParserError(code: string, message: string): string {
  if (/call stack/i.test(message)) {
    return "nesting is too deep to read; a manifest needs only a few levels";
  }
  const hint = PARSER_HINTS[code];
  const cleaned = message.replace(/\.$/, "");
  return hint === undefined ? cleaned : `${cleaned}; ${hint}`;
}

type ParsedDocument = ReturnType<ReturnType<typeof yamlLibrary>["parseDocument"]>;

/** For a value read only for its errors (a duplicate key's). */
const DROP: BlockBuilder<null, null> = {
  container: () => null,
  scalar: () => undefined,
  entrySlot: () => null,
  itemSlot: () => null,
  end: () => undefined,
};

/** Walks yaml's document, telling the builder what the fast reader would tell it of the same text. */
class TreeConverter<Container, Slot> {
  truncated = false;
  private aliasExpansion = 0;
  /** Each alias's anchored node, found in one pass: resolving each alias alone is quadratic. */
  private aliasTargets: Map<Alias, Node | undefined> | undefined;
  private readonly limitsReported = new Set<string>();
  /** To refuse an alias to one of its own ancestors. */
  private readonly ancestors = new Set<Node>();
  private readonly yaml = yamlLibrary();

  constructor(
    private readonly document: ParsedDocument,
    private readonly text: string,
    private readonly positionAt: (offset: number) => Position,
    private readonly errors: YamlProblem[],
    private builder: BlockBuilder<Container, Slot>,
  ) {}

  convert(node: unknown, depth: number, slot: Slot | null, viaAlias = false): void {
    const start = rangeStart(node);
    const target = this.admit(node, depth, viaAlias, start);
    if (target === undefined) this.emptyScalar(start, slot);
    else if (target !== node) this.convert(target, depth, slot, true);
    else if (this.yaml.isMap(node) || this.yaml.isSeq(node)) {
      const container = this.builder.container(this.yaml.isMap(node) ? "map" : "seq", start, slot);
      this.ancestors.add(node);
      if (this.yaml.isMap(node)) this.convertMap(node.items, container, depth, viaAlias);
      else
        for (const item of node.items)
          this.convert(item, depth + 1, this.builder.itemSlot(container), viaAlias);
      this.ancestors.delete(node);
      this.builder.end(container);
    } else if (this.yaml.isScalar(node)) this.convertScalar(node, slot);
    else this.emptyScalar(start, slot);
  }

  /** The node to read (an alias's target), or undefined when refused (reported). */
  private admit(node: unknown, depth: number, viaAlias: boolean, start: number): unknown {
    const position = this.positionAt(start);
    const aliasBudget = Math.max(MAX_ALIAS_EXPANSION, this.text.length);
    if (viaAlias && ++this.aliasExpansion > aliasBudget) {
      const message = `aliases expand to more than ${aliasBudget} values (an alias bomb?); write the data out or use fewer aliases`;
      return this.truncate(position, message);
    }
    if (depth > MAX_DEPTH)
      return this.truncate(
        position,
        `nesting is deeper than ${MAX_DEPTH} levels; a manifest needs only a few`,
      );
    if (!this.yaml.isAlias(node)) return node;
    const target = this.resolveAlias(node);
    const message =
      target === undefined
        ? `unknown anchor "${node.source}"; define \`&${node.source}\` before using \`*${node.source}\``
        : this.ancestors.has(target)
          ? `alias "*${node.source}" refers to a value that contains it; remove the cycle`
          : undefined;
    if (message === undefined) return target;
    this.errors.push({ position, message });
    return undefined;
  }

  /** Said once per message, however often met. */
  private truncate(position: Position, message: string): undefined {
    this.truncated = true;
    if (!this.limitsReported.has(message)) {
      this.limitsReported.add(message);
      this.errors.push({ position, message });
    }
    return undefined;
  }

  /** As `alias.resolve(document)`: the last node anchored with its name before it. */
  private resolveAlias(alias: Alias): Node | undefined {
    if (this.aliasTargets === undefined) {
      const targets = new Map<Alias, Node | undefined>();
      const anchors = new Map<string, Node>();
      this.yaml.visit(this.document, {
        Node: (_key, node) => {
          if (this.yaml.isAlias(node)) targets.set(node, anchors.get(node.source));
          else if (node.anchor) anchors.set(node.anchor, node);
        },
      });
      this.aliasTargets = targets;
    }
    return this.aliasTargets.get(alias);
  }

  private convertMap(items: readonly unknown[], map: Container, depth: number, viaAlias: boolean): void {
    const seen = new Map<string, Position>();
    for (const pair of items) {
      if (!this.yaml.isPair(pair)) continue;
      const keyNode = pair.key;
      // `: value` without a key has no range of its own: point at the value.
      const keyStart = rangeStart(keyNode ?? pair.value);
      const keyEnd = Math.max(keyStart, rangeEnd(keyNode));
      const keyPosition = this.positionAt(keyStart);
      const key = this.keyText(keyNode, keyPosition);
      const problem = key === undefined ? undefined : this.keyProblem(key, keyNode, seen.get(key));
      if (problem !== undefined) this.errors.push({ position: keyPosition, message: problem });
      else if (key !== undefined) seen.set(key, keyPosition);
      // A key refused (or not text) drops its entry, but its value is still read for its own errors.
      const kept = key !== undefined && problem === undefined;
      const slot = kept ? this.builder.entrySlot(map, key, keyStart, keyEnd) : null;
      const valueNode = pair.value;
      const builder = this.builder;
      if (!kept) this.builder = DROP as unknown as BlockBuilder<Container, Slot>;
      // `key:` with nothing after it: a null value, placed right after the key.
      if (valueNode === null || valueNode === undefined) this.emptyScalar(rangeEnd(keyNode), slot);
      else this.convert(valueNode, depth + 1, slot, viaAlias);
      this.builder = builder;
    }
  }

  private keyProblem(key: string, keyNode: unknown, first: Position | undefined): string | undefined {
    if (key === "<<" && this.yaml.isScalar(keyNode) && keyNode.type === "PLAIN")
      return "YAML merge keys (<<) are not supported; write the keys out, or alias a whole block instead";
    if (first !== undefined)
      return `duplicate key "${key}" (first at line ${first.line}, column ${first.col}); remove one of them`;
    return undefined;
  }

  private keyText(keyNode: unknown, position: Position): string | undefined {
    if (this.yaml.isScalar(keyNode)) {
      const value = keyNode.value;
      if (typeof value === "string") return value;
      // An unquoted `1:` is a number to YAML but a project id to us: keep what was written.
      if (typeof value === "number" || typeof value === "boolean" || value === null) {
        return typeof keyNode.source === "string" ? keyNode.source : String(value);
      }
    }
    this.errors.push({
      position,
      message: "keys must be plain text; write the key as a string",
    });
    return undefined;
  }

  private convertScalar(node: Scalar, slot: Slot | null): void {
    const start = rangeStart(node);
    const raw: unknown = node.value;
    // The core schema only yields these; anything else (a custom tag's object) is read as text.
    const value: ScalarValue =
      raw === null || typeof raw === "string" || typeof raw === "boolean" || typeof raw === "number"
        ? raw
        : String(raw);
    this.builder.scalar(value, start, Math.max(start, rangeEnd(node)), slot);
  }

  private emptyScalar(offset: number, slot: Slot | null): void {
    this.builder.scalar(null, offset, offset, slot);
  }
}

/** 0 for none, such as a missing key. */
function rangeStart(node: unknown): number {
  return (node as Node | null | undefined)?.range?.[0] ?? 0;
}

function rangeEnd(node: unknown): number {
  return (node as Node | null | undefined)?.range?.[1] ?? rangeStart(node);
}
