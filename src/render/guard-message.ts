// A safety guard in the words pcsync shows and saves in a plan: what the planner found, then the
// flags that override it.

import { describeGuardFinding } from "../plan/safety-guards.js";
import type { GuardFinding, GuardRule } from "../plan/types.js";

const OVERRIDES = {
  prune_to_empty: "Use --force if that is really intended.",
  max_delete_percent: "Raise --max-delete-percent or use --force if that is intended.",
  max_update_percent: "Raise --max-update-percent or use --force if that is intended.",
  protected:
    "Pass --allow-destroy NAME for each record to delete, if that is intended (--force does not lift protection).",
} as const satisfies Record<GuardRule, string>;

/** The message of a guard in a plan the CLI makes (given to the planner as PlanOptions.describeGuard). */
export function describeGuard(finding: GuardFinding): string {
  return `${describeGuardFinding(finding)} ${OVERRIDES[finding.rule]}`;
}
