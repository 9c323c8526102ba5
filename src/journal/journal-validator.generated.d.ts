// The module scripts/build-validators.mjs writes beside journal-format.js (not in src/): the
// standalone ajv validator of schemas/journal.schema.json.

import type { ValidateFunction } from "ajv";

// Not typed with the line types: journal-format.ts imports this module, and says what it checks.
export declare const validate: ValidateFunction;
