// The ajv validator of schemas/plan.schema.json, which `apply --plan` checks a saved plan with.
// The build precompiles it (scripts/build-validators.mjs), so no run compiles a schema; from
// source (the tests) it is compiled at first use (src/precompiled.ts has the rule).

import type { ValidateFunction } from "ajv";
import { JSON_FILE_AJV_OPTIONS, readJsonFileSchema } from "../files/json-file-schemas.js";
import { precompiledValidator } from "../precompiled.js";
import type { Plan } from "./types.js";

/** The plan validator; a literal import, so that the action's bundle holds the generated module. */
export const getPlanValidator: () => ValidateFunction<Plan> = await precompiledValidator(
  import("./plan-validator.generated.js"),
  "the plan file validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () => new Ajv(JSON_FILE_AJV_OPTIONS).compile<Plan>(readJsonFileSchema("plan"));
  },
);
