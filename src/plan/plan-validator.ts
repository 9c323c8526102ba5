// The validator of schemas/plan.schema.json for `apply --plan`: precompiled by the build, compiled at
// first use from source (src/precompiled.ts).

import type { ValidateFunction } from "ajv";
import { JSON_FILE_AJV_OPTIONS, readJsonFileSchema } from "../files/json-file-schemas.js";
import { precompiledValidator } from "../precompiled.js";
import type { Plan } from "./types.js";

// A literal import, so that the action's bundle holds the generated module.
export const getPlanValidator: () => ValidateFunction<Plan> = await precompiledValidator(
  import("./plan-validator.generated.js"),
  "the plan file validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () => new Ajv(JSON_FILE_AJV_OPTIONS).compile<Plan>(readJsonFileSchema("plan"));
  },
);
