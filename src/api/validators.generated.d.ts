// The module scripts/build-validators.mjs writes beside validate-response.js (not in src/): one
// standalone ajv validator per response shape, named as in SCHEMA_FILES.

import type { ValidateFunction } from "ajv";

export declare const record: ValidateFunction;
export declare const recordList: ValidateFunction;
export declare const recordPage: ValidateFunction;
export declare const logPage: ValidateFunction;
export declare const projectPage: ValidateFunction;
export declare const errorBody: ValidateFunction;
