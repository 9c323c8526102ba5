// Where each value of a read manifest was written, by path, in a few flat arrays instead of a parse
// tree (an object per key and value, the largest thing a big manifest would cost).

import type { Position } from "./diagnostics.js";

export interface NodeLocation {
  /** When it is a map entry. */
  key?: Position;
  /** For a map or list, where it starts. */
  value: Position;
}

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
 * Nodes are numbered in document order (a map or list before what it holds). `ends` holds the number
 * of the first node after a node's last descendant: how a lookup steps from one child to the next.
 */
export class NodePlacesBuilder {
  private kinds: Uint8Array;
  /** -1 for list items and the root. */
  private keyOffsets: Int32Array;
  private valueOffsets: Int32Array;
  private ends: Int32Array;
  /** The reader's strings, shared. */
  private readonly keys: (string | undefined)[] = [];
  private count = 0;

  constructor(capacity: number) {
    const size = Math.max(1, capacity);
    this.kinds = new Uint8Array(size);
    this.keyOffsets = new Int32Array(size);
    this.valueOffsets = new Int32Array(size);
    this.ends = new Int32Array(size);
  }

  /** Returns the node's number, for close(). */
  open(kind: "scalar" | "map" | "seq", offset: number, key: string | undefined, keyOffset: number): number {
    const index = this.count++;
    if (index === this.kinds.length) this.grow();
    this.kinds[index] = kind === "scalar" ? SCALAR : kind === "map" ? MAP : SEQ;
    this.keyOffsets[index] = key === undefined ? NO_KEY : keyOffset;
    this.valueOffsets[index] = offset;
    this.keys[index] = key;
    return index;
  }

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
  /** For big maps: the last entry of a key, as in the plain value. */
  private readonly keyIndexes = new Map<number, Map<string, number>>();
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

  private childrenOf(node: number, limit: number): number[] {
    const children: number[] = [];
    const end = this.ends[node] ?? node;
    for (let child = node + 1; child < end && children.length < limit; child = this.ends[child] ?? end) {
      children.push(child);
    }
    return children;
  }
}
