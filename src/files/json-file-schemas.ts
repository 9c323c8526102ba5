// The JSON Schemas of the files pcsync reads back (a saved plan, journals) and their ajv options:
// shared by the build, which precompiles them, and the *-validator.ts modules.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";
import { isObject } from "../plain-object.js";

/** Every error, with the schema beside it (`verbose`), for messages that name the first. */
export const JSON_FILE_AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
  verbose: true,
  discriminator: true,
} as const;

export const JSON_FILE_SCHEMAS = {
  plan: "plan.schema.json",
  journal: "journal.schema.json",
  rolloutJournal: "rollout-journal.schema.json",
} as const;

export function readJsonFileSchema(name: keyof typeof JSON_FILE_SCHEMAS): Record<string, unknown> {
  const file = join("schemas", JSON_FILE_SCHEMAS[name]);
  const parsed: unknown = JSON.parse(readFileSync(findPackageFile(file), "utf8"));
  if (!isObject(parsed)) throw new Error(`${file} is not a JSON object`);
  return parsed;
}
