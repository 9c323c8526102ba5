// The ajv validator of schemas/rollout-journal.schema.json, which every line of a rollout journal is checked with.
// The build precompiles it (scripts/build-validators.mjs), so no run compiles a schema; from
// source (the tests) it is compiled at first use (src/precompiled.ts has the rule).

import type { ValidateFunction } from "ajv";
import { JSON_FILE_AJV_OPTIONS, readJsonFileSchema } from "../files/json-file-schemas.js";
import { precompiledValidator } from "../precompiled.js";
import type { RolloutJournalLine } from "./rollout-journal-lines.js";

/** The validator of a rollout journal line; a literal import, so that the action's bundle holds the generated module. */
export const getRolloutLineValidator: () => ValidateFunction<RolloutJournalLine> = await precompiledValidator(
  import("./rollout-journal-validator.generated.js"),
  "the rollout journal validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () =>
      new Ajv(JSON_FILE_AJV_OPTIONS).compile<RolloutJournalLine>(readJsonFileSchema("rolloutJournal"));
  },
);
