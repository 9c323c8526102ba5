// `npm run generate`: writes the manifest's TypeScript types from its JSON Schema. Run it after
// editing schemas/manifest.schema.json; test/lint/manifest-schema-types.test.ts fails until then.

import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { generateManifestTypes, TYPES_FILE } from "./manifest-types.mjs";

await writeFile(TYPES_FILE, await generateManifestTypes());
console.log(`wrote ${fileURLToPath(TYPES_FILE)}`);
