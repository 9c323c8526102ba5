// The tree a manifest's YAML parses into: every key and value with where it was written, so later
// stages can point at the offending spot. Both readers (load-yaml.ts, parse-block-yaml.ts) build it.

import type { Position } from "./diagnostics.js";

/** Where a scalar (value or key) was written: its start, and its source text to point inside it. */
export interface SourceSpan {
  position: Position;
  offset: number;
  text: string;
}

export type ScalarValue = string | number | boolean | null;

export interface ScalarNode {
  kind: "scalar";
  value: ScalarValue;
  span: SourceSpan;
  /** Set once `${...}` was replaced, so the value is typed by the schema rather than by YAML. */
  interpolated?: boolean;
}

export interface MapEntry {
  key: string;
  keySpan: SourceSpan;
  value: ValueNode;
}

export interface MapNode {
  kind: "map";
  position: Position;
  entries: MapEntry[];
}

export interface SeqNode {
  kind: "seq";
  position: Position;
  items: ValueNode[];
}

export type ValueNode = ScalarNode | MapNode | SeqNode;

export interface YamlProblem {
  position: Position;
  message: string;
}
