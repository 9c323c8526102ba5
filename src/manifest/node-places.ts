// Where each value of a read manifest was written, kept in a few flat arrays instead of a parse
// tree (an object per key and value, the largest thing a big manifest would cost), so that messages
// can point at any value by its path.
//
// Nodes are numbered in document order (a map or list before its children). For each node the
// arrays hold its kind, the offset of the key that names it (-1 for list items and the root),
// the offset of its value, and `ends`: the number of the first node after its last descendant,
// which is how a lookup steps from one child to the next.

import type { Position } from "./diagnostics.js";

/** Where a value of the plain manifest was written. */
export interface NodeLocation {
  /** The key naming this value, when it is a map entry. */
  key?: Position;
  /** The value itself (for a map or list, where it starts). */
  value: Position;
}

/** Finds where a value was written. */
export interface LocationIndex {
  /** By path: ["projects", "1", "plugin_configs", "configs", 0, "name"]. */
  lookup(path: readonly (string | number)[]): NodeLocation | undefined;
}

const SCALAR = 0;
const MAP = 1;
const SEQ = 2;
const NO_KEY = -1;

/** Maps and lists with more children than this get an index on their first lookup, so lookups stay O(1). */
const SCAN_LIMIT = 8;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * Records nodes in document order (a map or list before what it holds), as a reader reads them.
 * Room for `capacity` nodes, grown as needed.
 */
export class NodePlacesBuilder {
  private kinds: Uint8Array;
  private keyOffsets: Int32Array;
  private valueOffsets: Int32Array;
  private ends: Int32Array;
  /** The key naming each node (undefined for list items): the reader's strings, shared. */
  private readonly keys: (string | undefined)[] = [];
  private count = 0;

  constructor(capacity: number) {
    const size = Math.max(1, capacity);
    this.kinds = new Uint8Array(size);
    this.keyOffsets = new Int32Array(size);
    this.valueOffsets = new Int32Array(size);
    this.ends = new Int32Array(size);
  }

  /** A node starts at `offset`, named by `key` (at `keyOffset`) in a map; returns its number, for close(). */
  open(kind: "scalar" | "map" | "seq", offset: number, key: string | undefined, keyOffset: number): number {
    const index = this.count++;
    if (index === this.kinds.length) this.grow();
    this.kinds[index] = kind === "scalar" ? SCALAR : kind === "map" ? MAP : SEQ;
    this.keyOffsets[index] = key === undefined ? NO_KEY : keyOffset;
    this.valueOffsets[index] = offset;
    this.keys[index] = key;
    return index;
  }

  /** The node numbered `index` and all its descendants are recorded. */
  close(index: number): void {
    this.ends[index] = this.count;
  }

  finish(positionAt: (offset: number) => Position): LocationIndex {
    const { count } = this;
    const atCount = <T extends Uint8Array | Int32Array>(array: T): T =>
      array.length === count ? array : (array.slice(0, count) as T);
    return new NodePlaces(
      atCount(this.kinds),
      atCount(this.keyOffsets),
      atCount(this.valueOffsets),
      atCount(this.ends),
      this.keys,
      positionAt,
    );
  }

  private grow(): void {
    const size = this.kinds.length * 2;
    const grown = <T extends Uint8Array | Int32Array>(array: T, bigger: T): T => {
      bigger.set(array);
      return bigger;
    };
    this.kinds = grown(this.kinds, new Uint8Array(size));
    this.keyOffsets = grown(this.keyOffsets, new Int32Array(size));
    this.valueOffsets = grown(this.valueOffsets, new Int32Array(size));
    this.ends = grown(this.ends, new Int32Array(size));
  }
}

class NodePlaces implements LocationIndex {
  /** For big maps: each key's node (the last entry of a key, as in the plain value). */
  private readonly keyIndexes = new Map<number, Map<string, number>>();
  /** For big lists: each item's node. */
  private readonly itemIndexes = new Map<number, Int32Array>();

  constructor(
    private readonly kinds: Uint8Array,
    private readonly keyOffsets: Int32Array,
    private readonly valueOffsets: Int32Array,
    private readonly ends: Int32Array,
    private readonly keys: readonly (string | undefined)[],
    private readonly positionAt: (offset: number) => Position,
  ) {}

  lookup(path: readonly (string | number)[]): NodeLocation | undefined {
    let node = this.kinds.length > 0 ? 0 : NO_KEY;
    for (const segment of path) {
      if (node < 0) return undefined;
      node = this.stepInto(node, String(segment));
    }
    return node < 0 ? undefined : this.locationOf(node);
  }

  private locationOf(node: number): NodeLocation {
    const value = this.positionAt(this.valueOffsets[node] ?? 0);
    const keyOffset = this.keyOffsets[node] ?? NO_KEY;
    return keyOffset === NO_KEY ? { value } : { key: this.positionAt(keyOffset), value };
  }

  /** The child of `node` that `segment` names, or -1. */
  private stepInto(node: number, segment: string): number {
    const kind = this.kinds[node];
    if (kind === SEQ) return ARRAY_INDEX.test(segment) ? this.itemOf(node, Number(segment)) : NO_KEY;
    if (kind === MAP) return this.entryOf(node, segment);
    return NO_KEY;
  }

  private itemOf(node: number, position: number): number {
    const indexed = this.itemIndexes.get(node);
    if (indexed !== undefined) return indexed[position] ?? NO_KEY;
    const children = this.childrenOf(node, SCAN_LIMIT + 1);
    if (children.length <= SCAN_LIMIT) return children[position] ?? NO_KEY;
    const all = Int32Array.from(this.childrenOf(node, Number.POSITIVE_INFINITY));
    this.itemIndexes.set(node, all);
    return all[position] ?? NO_KEY;
  }

  private entryOf(node: number, key: string): number {
    const indexed = this.keyIndexes.get(node);
    if (indexed !== undefined) return indexed.get(key) ?? NO_KEY;
    const children = this.childrenOf(node, SCAN_LIMIT + 1);
    if (children.length <= SCAN_LIMIT) {
      // Two project keys can be equal when one of them failed to interpolate (that error is
      // reported): the last one is what the plain value holds.
      for (let index = children.length - 1; index >= 0; index--) {
        const child = children[index] ?? NO_KEY;
        if (this.keys[child] === key) return child;
      }
      return NO_KEY;
    }
    const all = new Map<string, number>();
    for (const child of this.childrenOf(node, Number.POSITIVE_INFINITY)) {
      const name = this.keys[child];
      if (name !== undefined) all.set(name, child);
    }
    this.keyIndexes.set(node, all);
    return all.get(key) ?? NO_KEY;
  }

  /** The first `limit` children of `node`, in order. */
  private childrenOf(node: number, limit: number): number[] {
    const children: number[] = [];
    const end = this.ends[node] ?? node;
    for (let child = node + 1; child < end && children.length < limit; child = this.ends[child] ?? end) {
      children.push(child);
    }
    return children;
  }
}
