// The error for a plan that cannot be made from what was read: invalid, or refused when every
// problem is a record of another owner.

import type { PcsyncError } from "../errors.js";
import { InputError } from "../input-error.js";
import type { PlanDiagnostic } from "../plan/compute-plan.js";
import { RefusedError } from "../refused-error.js";

/** The error for a plan that cannot be made: a refusal when every problem is an owner conflict. */
export function planErrorOf(errors: readonly PlanDiagnostic[]): PcsyncError {
  const problems = errors.map((error) => `${error.source}: ${error.message}`);
  return errors.length > 0 && errors.every((error) => error.refused === true)
    ? new RefusedError("owner_conflict", { problems })
    : new InputError("plan_invalid", { problems });
}
