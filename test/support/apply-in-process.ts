// Reading, planning and applying in-process, as `pcsync apply` does, for tests that apply many
// times against an emulator and check what a fresh plan would still change.

import type { ApiClient } from "../../src/api/index.js";
import { type ApplyOptions, applyPlan } from "../../src/apply/apply-plan.js";
import type { ApplyReport } from "../../src/apply/types.js";
import type { DesiredState } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { Plan } from "../../src/plan/types.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { describeGuard } from "../../src/render/guard-message.js";

/** Reads, plans and applies in-process, as `pcsync apply` does. */
export async function applyOnce(
  client: ApiClient,
  desired: DesiredState,
  options: Partial<ApplyOptions> = {},
): Promise<{ plan: Plan; report: ApplyReport }> {
  const refs = listsToPlan(desired);
  const current = await readCurrentState(client, refs, { concurrency: 2 });
  const { plan, errors } = computePlan(desired, current);
  if (!plan) throw new Error(`plan refused: ${errors.map((error) => error.message).join("; ")}`);
  if (plan.guards.length > 0)
    throw new Error(`guards: ${plan.guards.map((guard) => describeGuard(guard)).join("; ")}`);
  const report = await applyPlan(client, plan, current, { concurrency: 2, ...options });
  return { plan, report };
}

/** What a fresh plan would change: empty when the state has converged. */
export async function pendingChanges(client: ApiClient, desired: DesiredState): Promise<string[]> {
  const current = await readCurrentState(client, listsToPlan(desired), { concurrency: 2 });
  const { plan, errors } = computePlan(desired, current);
  if (!plan) return errors.map((error) => `plan error: ${error.message}`);
  return [
    ...plan.changes.map((change) => `${change.action} ${change.family} ${change.name} (id ${change.id})`),
    ...plan.reorders.flatMap((reorder) =>
      reorder.moves.map((move) => `move ${reorder.family} ${move.name} ${move.from} -> ${move.to}`),
    ),
  ];
}
