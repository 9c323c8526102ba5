// The ajv validator of schemas/journal.schema.json, which every line of an apply journal is checked with.
// The build precompiles it (scripts/build-validators.mjs), so no run compiles a schema; from
// source (the tests) it is compiled at first use (src/precompiled.ts has the rule).

import type { ValidateFunction } from "ajv";
import { JSON_FILE_AJV_OPTIONS, readJsonFileSchema } from "../files/json-file-schemas.js";
import { precompiledValidator } from "../precompiled.js";
import type { JournalLine } from "./journal-lines.js";

/** The validator of a journal line; a literal import, so that the action's bundle holds the generated module. */
export const getJournalLineValidator: () => ValidateFunction<JournalLine> = await precompiledValidator(
  import("./journal-validator.generated.js"),
  "the journal validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () => new Ajv(JSON_FILE_AJV_OPTIONS).compile<JournalLine>(readJsonFileSchema("journal"));
  },
);
