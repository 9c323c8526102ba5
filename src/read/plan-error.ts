// The plan cannot be made: the manifest and the server's state contradict each other (a config
// pinned to a missing id, a record claimed twice, a project named twice).

import { EXIT_REFUSED, PcsyncError } from "../errors.js";
import type { PlanDiagnostic } from "../plan/compute-plan.js";

export class PlanError extends PcsyncError {
  constructor(readonly problems: string[]) {
    super(
      "plan_invalid",
      `the plan cannot be made:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
    );
  }
}

/**
 * Configs that match records another owner marked: refused (exit 3) rather than invalid, as a
 * guard refuses, and `--takeover` is the way on.
 */
export class OwnerConflictError extends PcsyncError {
  constructor(readonly problems: string[]) {
    super(
      "owner_conflict",
      `the plan is refused: records of another owner:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
      { exitCode: EXIT_REFUSED },
    );
  }
}

/** The error for a plan that cannot be made: a refusal when every problem is an owner conflict. */
export function planErrorOf(errors: readonly PlanDiagnostic[]): PcsyncError {
  const problems = errors.map((error) => `${error.source}: ${error.message}`);
  return errors.length > 0 && errors.every((error) => error.refused === true)
    ? new OwnerConflictError(problems)
    : new PlanError(problems);
}
