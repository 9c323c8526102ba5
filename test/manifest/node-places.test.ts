// The flat index of where each value was written (node-places.ts), which stands in for a parse
// tree: for any document, every path finds the position a walk of yaml's own tree finds, and
// nothing else is found.

import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { NO_VARIABLES } from "../../src/manifest/index.js";
import { parseYaml } from "../../src/manifest/load-yaml.js";
import { PlainBuilder } from "../../src/manifest/plain-manifest.js";
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
  it("finds every value and key where a walk of the tree finds it", () => {
    fc.assert(
      fc.property(fc.dictionary(keyText, document, { minKeys: 1, maxKeys: 14 }), (data) => {
        const text = stringify(data, { lineWidth: 0 });
        const { locations } = readPlaces(text);
        for (const { path, place } of walkPlaces(text)) {
          expect(locations.lookup(path)).toStrictEqual(place);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("finds nothing where there is nothing, in small and indexed maps and lists alike", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`k${index}`, index]));
    const text = stringify({ small: { a: 1 }, big: many, list: [1, 2], long: Array(20).fill("x") });
    const { locations, positionAt } = readPlaces(text);
    for (const path of [
      ["nope"],
      ["small", "b"],
      ["big", "k20"],
      ["list", 2],
      ["list", "-1"],
      ["list", "01"],
      ["long", 20],
      ["long", "x"],
      ["small", "a", "deeper"],
      ["a~2b"],
    ]) {
      expect(locations.lookup(path), path.join("/")).toBeUndefined();
    }
    expect(locations.lookup(["big", "k19"])?.key).toEqual(positionAt(text.indexOf("k19:")));
    expect(locations.lookup(["long", 19])?.value.line).toBe(text.split("\n").length - 1);
    expect(locations.lookup([])?.value).toEqual({ line: 1, col: 1 });
  });

  it("points at the last of two equal keys, as the plain value holds it", () => {
    // Only a failed interpolation leaves two equal keys: an unset `${NOPE}` is left out.
    const text = 'projects:\n  ${NOPE}: 1\n  "": 2\n';
    const parsed = parseYaml(text, () => new PlainBuilder(text, NO_VARIABLES));
    const { plain, errors } = parsed.built.finish(parsed.positionAt);
    expect(errors.map((error) => error.position)).toEqual([{ line: 2, col: 3 }]);
    expect(plain?.value).toEqual({ projects: { "": 2 } });
    expect(plain?.locations.lookup(["projects", ""])).toEqual({
      key: { line: 3, col: 3 },
      value: { line: 3, col: 7 },
    });
  });
});

/** The places of a text that parses without problems. */
function readPlaces(text: string) {
  const parsed = parseYaml(text, () => new PlainBuilder(text, NO_VARIABLES));
  expect(parsed.errors).toEqual([]);
  const { plain } = parsed.built.finish(parsed.positionAt);
  if (plain === undefined) throw new Error("nothing read");
  return { locations: plain.locations, positionAt: parsed.positionAt };
}
