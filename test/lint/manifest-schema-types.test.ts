// Keeps src/manifest/manifest-schema-types.ts equal to what schemas/manifest.schema.json generates,
// so the schema stays the one source of the manifest's TypeScript types. `npm run generate` writes them.

import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generateManifestTypes, TYPES_FILE } from "../../scripts/manifest-types.mjs";

// Formatting differs between the generator's and the linter's formatter; whitespace carries no type.
function normalize(source: string): string {
  return source.replace(/\s+/g, "");
}

describe("manifest schema types", () => {
  it("are generated from the schema", async () => {
    const generated = await generateManifestTypes();
    const committed = await readFile(TYPES_FILE, "utf8");
    expect(normalize(committed), "the schema and its types differ: run `npm run generate`").toBe(
      normalize(generated),
    );
  });
});
