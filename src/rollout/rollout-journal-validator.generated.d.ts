// The module scripts/build-validators.mjs writes beside rollout-journal-validator.js (not in src/): the
// standalone ajv validator of schemas/rollout-journal.schema.json.

import type { ValidateFunction } from "ajv";
import type { RolloutJournalLine } from "./rollout-journal-lines.js";

export declare const validate: ValidateFunction<RolloutJournalLine>;
