// The module scripts/build-validators.mjs writes beside journal-format.js (not in src/): the
// standalone ajv validator of schemas/journal.schema.json.

import type { ValidateFunction } from "ajv";
import type { JournalLine } from "./journal-format.js";

export declare const validate: ValidateFunction<JournalLine>;
