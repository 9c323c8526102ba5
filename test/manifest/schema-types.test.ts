// Keeps src/manifest/manifest-schema-types.ts equal to what schemas/manifest.schema.json generates,
// so the schema stays the one source of the manifest's TypeScript types.
// Regenerate after editing the schema: PCSYNC_WRITE_GENERATED=1 npx vitest run test/manifest/schema-types.test.ts

import { readFile, writeFile } from "node:fs/promises";
import { compile, type JSONSchema } from "json-schema-to-typescript";
import { describe, expect, it } from "vitest";

const schemaUrl = new URL("../../schemas/manifest.schema.json", import.meta.url);
const typesUrl = new URL("../../src/manifest/manifest-schema-types.ts", import.meta.url);

const BANNER = [
  "// The manifest's TypeScript types, generated from schemas/manifest.schema.json; do not edit.",
  "// Regenerate: PCSYNC_WRITE_GENERATED=1 npx vitest run test/manifest/schema-types.test.ts",
].join("\n");

// Formatting differs between the generator's and the linter's formatter; whitespace carries no type.
function normalize(source: string): string {
  return source.replace(/\s+/g, "");
}

describe("manifest schema types", () => {
  it("are generated from the schema", async () => {
    const schema = JSON.parse(await readFile(schemaUrl, "utf8")) as JSONSchema;
    const generated = await compile(schema, "Manifest", {
      bannerComment: BANNER,
      additionalProperties: false,
      strictIndexSignatures: true,
      style: { printWidth: 110, singleQuote: false },
    });
    if (process.env.PCSYNC_WRITE_GENERATED === "1") await writeFile(typesUrl, generated);
    const committed = await readFile(typesUrl, "utf8");
    expect(normalize(committed), "schema changed: regenerate the types (see the top of this file)").toBe(
      normalize(generated),
    );
  });
});
