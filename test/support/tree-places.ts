// Where a walk of a parse tree finds each value: the reference the flat index of places
// (node-places.ts) and the tree-free reader (block-plain.ts) are held to.

import { escapePointerSegment } from "../../src/manifest/plain-manifest.js";
import type { ValueNode } from "../../src/manifest/yaml-nodes.js";

type Position = { line: number; col: number };
export type Place = { key?: Position; value: Position };

/** Every node's pointer, path and place, by walking the tree (the last of equal keys, as the plain value holds). */
export function walkPlaces(
  node: ValueNode,
  positionAt: (offset: number) => Position,
  path: (string | number)[] = [],
  keyOffset?: number,
  found: { pointer: string; path: (string | number)[]; place: Place }[] = [],
) {
  const value = positionAt(node.offset);
  const place: Place = keyOffset === undefined ? { value } : { key: positionAt(keyOffset), value };
  found.push({
    pointer: path.map((segment) => `/${escapePointerSegment(String(segment))}`).join(""),
    path,
    place,
  });
  if (node.kind === "map") {
    const last = new Map(node.entries.map((entry) => [entry.key, entry]));
    for (const entry of last.values()) {
      walkPlaces(entry.value, positionAt, [...path, entry.key], entry.keyOffset, found);
    }
  } else if (node.kind === "seq") {
    node.items.forEach((item, index) => {
      walkPlaces(item, positionAt, [...path, index], undefined, found);
    });
  }
  return found;
}
