// Renders a plan as JSON (`--format json`): the same document `plan --out` saves, so scripts and
// `apply --plan` read one format.

import type { Plan } from "../plan/types.js";
import { serializePlan } from "./plan-file.js";

export function renderJson(plan: Plan): string {
  return serializePlan(plan);
}
