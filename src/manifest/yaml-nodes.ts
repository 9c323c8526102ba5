// The tree a manifest's YAML parses into: every key and value with where it was written, so later
// stages can point at the offending spot. Both readers (load-yaml.ts, parse-block-yaml.ts) build it.
//
// A node keeps only character offsets into its file's text; a line and column (or the text as
// written) are worked out when a message needs one (YamlSource). A big manifest has millions of
// nodes: a position object and a text slice per key and value cost more than the rest of the load.

import type { Position } from "./diagnostics.js";

/** The text a tree was read from: what turns a node's offsets into a position or source text. */
export interface YamlSource {
  text: string;
  /** Maps a character offset of the text to its line and column. */
  positionAt: (offset: number) => Position;
}

export type ScalarValue = string | number | boolean | null;

export interface ScalarNode {
  kind: "scalar";
  value: ScalarValue;
  /** Where the scalar starts in the text, and where it ends (past its closing quote, if any). */
  offset: number;
  end: number;
  /** Set once `${...}` was replaced, so the value is typed by the schema rather than by YAML. */
  interpolated?: boolean;
}

export interface MapEntry {
  key: string;
  /** Where the key was written: its start and its end, as for a scalar. */
  keyOffset: number;
  keyEnd: number;
  value: ValueNode;
}

export interface MapNode {
  kind: "map";
  /** Where the map starts (its first key). */
  offset: number;
  entries: MapEntry[];
}

export interface SeqNode {
  kind: "seq";
  /** Where the list starts (its first `-`, or `[`). */
  offset: number;
  items: ValueNode[];
}

export type ValueNode = ScalarNode | MapNode | SeqNode;

export interface YamlProblem {
  position: Position;
  message: string;
}
