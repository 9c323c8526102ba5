// Export leaves out a record whose name no manifest can hold: the rule it goes by
// (unmanifestableName) is held to the manifest's own schema, name for name.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getManifestValidator } from "../../src/manifest/manifest-validator.js";
import { unmanifestableName } from "../../src/record-name.js";

/** Whether the manifest's schema takes `name` as a config's name. */
function schemaTakes(name: string): boolean {
  const manifest = { version: 1, projects: { "1": { plugin_configs: { configs: [{ name, plugin: 1 }] } } } };
  return getManifestValidator()(manifest);
}

/** Characters at the edges of the rule: controls, DEL, C1, white space, astral, and plain ones. */
const CHARACTER = fc.oneof(
  fc.constantFrom("\u0000", "\t", "\n", "\u001b", "\u001f", "\u007f", "\u0085", "\u009b", " ", "\u2028"),
  fc.constantFrom("a", "é", "\u{1F600}", "-", "*"),
);

describe("a name export leaves out", () => {
  it("is exactly a name the manifest's schema refuses", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(CHARACTER, { maxLength: 12 }).map((characters) => characters.join("")),
          // Around the length limit, counted in characters (an astral one is one).
          fc
            .tuple(fc.integer({ min: 395, max: 405 }), fc.constantFrom("a", "\u{1F600}"))
            .map(([length, character]) => character.repeat(length)),
        ),
        (name) => {
          expect(unmanifestableName(name) === undefined).toBe(schemaTakes(name));
        },
      ),
      { numRuns: 400 },
    );
  });
});
