// The plan schema (schemas/plan.schema.json) and the options its validator is compiled with:
// shared by the build, which precompiles it (scripts/build-validators.mjs), and plan-validator.ts.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";

const SCHEMA_FILE = join("schemas", "plan.schema.json");

/** Every error, with the schema beside it (`verbose`), for messages that name the first. */
export const PLAN_AJV_OPTIONS = {
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
  verbose: true,
} as const;

/** The plan schema, as parsed JSON. */
export function readPlanSchema(): Record<string, unknown> {
  const parsed: unknown = JSON.parse(readFileSync(findPackageFile(SCHEMA_FILE), "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${SCHEMA_FILE} is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
