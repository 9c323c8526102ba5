// The module scripts/build-validators.mjs writes beside manifest-validator.js (not in src/): the
// standalone ajv validator of schemas/manifest.schema.json.

import type { ValidateFunction } from "ajv";
import type { Manifest } from "./manifest-schema-types.js";

export declare const validate: ValidateFunction<Manifest>;
