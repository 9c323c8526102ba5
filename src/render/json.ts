// Renders a plan as JSON (`--format json`): the same document `plan --out` saves, so scripts and
// `apply --plan` read one format.

import { serializePlan } from "../plan/plan-file.js";
import type { Plan } from "../plan/types.js";

export function renderJson(plan: Plan): string {
  return serializePlan(plan);
}
