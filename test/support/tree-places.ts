// Where the yaml library's own parse tree puts each value and key: the reference the index of
// places (node-places.ts) is held to, walked from yaml's document rather than by the loader.

import { isMap, isScalar, isSeq, LineCounter, parseDocument } from "yaml";

type Position = { line: number; col: number };
export type Place = { key?: Position; value: Position };

const startOf = (node: unknown): number | undefined =>
  (node as { range?: readonly number[] } | null)?.range?.[0];

/** Every value's path and place in `text` (the last of equal keys, as the plain value holds). */
export function walkPlaces(text: string): { path: (string | number)[]; place: Place }[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: false });
  const positionAt = (offset: number): Position => lineCounter.linePos(offset);
  const found: { path: (string | number)[]; place: Place }[] = [];
  const walk = (
    node: unknown,
    path: (string | number)[],
    keyOffset: number | undefined,
    valueOffset: number,
  ) => {
    const value = positionAt(valueOffset);
    const place: Place = keyOffset === undefined ? { value } : { key: positionAt(keyOffset), value };
    found.push({ path, place });
    if (isMap(node)) {
      const last = new Map<string, { key: unknown; value: unknown }>();
      for (const pair of node.items) {
        const key = pair.key;
        // As the loader: an unquoted `1:` is the key "1", as written.
        const name =
          isScalar(key) && typeof key.value !== "string" ? key.source : (key as { value: string }).value;
        last.set(String(name), pair);
      }
      for (const [name, pair] of last) {
        const keyStart = startOf(pair.key) ?? 0;
        const keyEnd = (pair.key as { range?: readonly number[] }).range?.[1] ?? keyStart;
        walk(pair.value, [...path, name], keyStart, startOf(pair.value) ?? keyEnd);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        walk(item, [...path, index], undefined, startOf(item) ?? 0);
      });
    }
  };
  walk(document.contents, [], undefined, startOf(document.contents) ?? 0);
  return found;
}
