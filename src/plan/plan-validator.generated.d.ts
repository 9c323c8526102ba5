// The module scripts/build-validators.mjs writes beside plan-validator.js (not in src/): the
// standalone ajv validator of schemas/plan.schema.json.

import type { ValidateFunction } from "ajv";
import type { Plan } from "./types.js";

export declare const validate: ValidateFunction<Plan>;
