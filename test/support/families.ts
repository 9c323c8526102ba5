// Short names of the two families, for tests that name them often.

import type { FamilyName } from "../../src/families.js";

export const PC: FamilyName = "plugin_configs";
export const FE: FamilyName = "pipeline_frontend_apps_configs";
