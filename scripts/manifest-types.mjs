// The manifest's TypeScript types as schemas/manifest.schema.json generates them: one place for the
// generator's options, shared by `npm run generate` (which writes them) and the test that checks them.

import { readFile } from "node:fs/promises";
import { compile } from "json-schema-to-typescript";

export const SCHEMA_FILE = new URL("../schemas/manifest.schema.json", import.meta.url);
export const TYPES_FILE = new URL("../src/manifest/manifest-schema-types.ts", import.meta.url);

const BANNER = [
  "// The manifest's TypeScript types, generated from schemas/manifest.schema.json; do not edit.",
  "// Regenerate after editing the schema: npm run generate",
].join("\n");

/**
 * The source of src/manifest/manifest-schema-types.ts for the schema as it is now. The schema's
 * descriptions stay in the schema (its one home, which editors show from there): repeated as doc
 * comments they made the types file three times its size.
 */
export async function generateManifestTypes() {
  const schema = withoutDescriptions(JSON.parse(await readFile(SCHEMA_FILE, "utf8")));
  return compile(schema, "Manifest", {
    bannerComment: BANNER,
    additionalProperties: false,
    strictIndexSignatures: true,
    style: { printWidth: 110, singleQuote: false },
  });
}

/** The schema without its `description` keywords (a property named `description` is a schema, kept). */
function withoutDescriptions(schema) {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === "description" && typeof value === "string"))
      .map(([key, value]) => [key, withoutDescriptions(value)]),
  );
}
