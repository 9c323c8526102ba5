// The flat index of where each value was written (node-places.ts), which outlives the parse tree:
// for any document, every JSON pointer finds the position a walk of the tree finds, and nothing
// else is found.

import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseYamlWithPositions } from "../../src/manifest/load-yaml.js";
import { toPlainManifest } from "../../src/manifest/plain-manifest.js";
import type { MapNode, ValueNode } from "../../src/manifest/yaml-nodes.js";
import { fc } from "../support/fast-check.js";
import { walkPlaces } from "../support/tree-places.js";

// `<<` is YAML's merge key, which the loader refuses (with its place) rather than indexes.
const keyText = fc
  .oneof(
    fc.constantFrom("name", "a/b", "~x", "~1~0", "1", "007", "__proto__", "a b", "é", "-1", ""),
    fc.string({ maxLength: 6 }),
  )
  .filter((key) => key !== "<<");
const document = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 12 }),
    fc.dictionary(keyText, tie("value"), { maxKeys: 12 }),
  ),
})).value;

describe("the index of where values were written", () => {
  it("finds every value and key where a walk of the tree finds it, by pointer and by path", () => {
    fc.assert(
      fc.property(fc.dictionary(keyText, document, { minKeys: 1, maxKeys: 14 }), (data) => {
        const text = stringify(data, { lineWidth: 0 });
        const parsed = parseYamlWithPositions(text);
        expect(parsed.errors).toEqual([]);
        const root = parsed.root as ValueNode;
        const { locations } = toPlainManifest(root, parsed.positionAt);
        for (const { pointer, path, place } of walkPlaces(root, parsed.positionAt)) {
          expect(locations.get(pointer)).toStrictEqual(place);
          expect(locations.lookup(path)).toStrictEqual(place);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("finds nothing where there is nothing, in small and indexed maps and lists alike", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`k${index}`, index]));
    const text = stringify({ small: { a: 1 }, big: many, list: [1, 2], long: Array(20).fill("x") });
    const parsed = parseYamlWithPositions(text);
    const { locations } = toPlainManifest(parsed.root as ValueNode, parsed.positionAt);
    for (const pointer of [
      "/nope",
      "/small/b",
      "/big/k20",
      "/list/2",
      "/list/-1",
      "/list/01",
      "/long/20",
      "/long/x",
      "/small/a/deeper",
      "/a~2b",
      "small",
    ]) {
      expect(locations.get(pointer), pointer).toBeUndefined();
    }
    expect(locations.lookup(["long", 20])).toBeUndefined();
    expect(locations.get("/big/k19")?.key).toEqual(parsed.positionAt(text.indexOf("k19:")));
    expect(locations.get("/long/19")?.value.line).toBe(text.split("\n").length - 1);
    expect(locations.get("")?.value).toEqual({ line: 1, col: 1 });
  });

  it("points at the last of two equal keys, as the plain value holds it", () => {
    // Only a failed interpolation leaves two equal keys in a tree; build one by hand.
    const text = "projects:\n  a: 1\n  a: 2\n";
    const map = (offset: number, entries: MapNode["entries"]): MapNode => ({ kind: "map", offset, entries });
    const scalar = (offset: number, value: number) => ({
      kind: "scalar" as const,
      value,
      offset,
      end: offset + 1,
    });
    const root = map(0, [
      {
        key: "projects",
        keyOffset: 0,
        keyEnd: 8,
        value: map(12, [
          { key: "a", keyOffset: 12, keyEnd: 13, value: scalar(15, 1) },
          { key: "a", keyOffset: 19, keyEnd: 20, value: scalar(22, 2) },
        ]),
      },
    ]);
    const parsed = parseYamlWithPositions(text);
    const { value, locations } = toPlainManifest(root, parsed.positionAt);
    expect(value).toEqual({ projects: { a: 2 } });
    expect(locations.get("/projects/a")).toEqual({ key: { line: 3, col: 3 }, value: { line: 3, col: 6 } });
  });
});
