// Checks a plan against the state read again just before it is applied: a saved plan (`apply
// --plan`) must still describe its server, and so must a plan the user took a while to approve.

import type { ApiClient } from "../api/index.js";
import { appendAll } from "../append-all.js";
import { familyKey, ofFamily } from "../families.js";
import { listsToRead } from "../family-lists.js";
import { findOwnerProblems } from "../plan/check-owner-marks.js";
import { findPlanInconsistencies } from "../plan/check-plan-integrity.js";
import { familiesTouchedBy, findStaleness, sameMembership } from "../plan/check-stale.js";
import { readPlanFile } from "../plan/plan-file.js";
import { getPlanValidator } from "../plan/plan-validator.js";
import { recheckProtection } from "../plan/protect.js";
import { type GuardOptions, guardedFamilies, recomputeGuards } from "../plan/recompute-guards.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { type ReadProgress, readCurrentState } from "../read/read-current-state.js";
import { lookAlikeKey } from "../record-name.js";
import { RefusedError } from "../refused-error.js";

export interface RereadOptions {
  concurrency: number;
  onProgress?: ReadProgress;
}

export interface SavedPlanOptions extends RereadOptions {
  /** The guards are computed again from the state read at apply time. */
  guards: GuardOptions;
  /** This run's: protection is checked again on the records as they are. */
  allowDestroy: readonly string[];
}

export async function readSavedPlan(path: string, cwd: string): Promise<Plan> {
  const plan = await readPlanFile(path, cwd, getPlanValidator());
  const problems = findPlanInconsistencies(plan);
  if (problems.length > 0) throw new RefusedError("plan_inconsistent", { file: path, problems });
  return plan;
}

export async function checkSavedPlan(
  plan: Plan,
  path: string,
  client: ApiClient,
  options: SavedPlanOptions,
): Promise<{ plan: Plan; current: CurrentState }> {
  checkPlanServer(plan, path, client);
  const current = await readStateForPlan(plan, client, options);
  const reasons = findPlanProblems(plan, current);
  const rechecked = recomputeGuards(plan, current, options.guards);
  appendAll(reasons, rechecked.reasons);
  if (reasons.length > 0) throw new RefusedError("stale_plan", { file: path, reasons });
  // The file's guards are those of when it was made; these hold now.
  const guards = [...recheckProtection(plan, current, options.allowDestroy), ...rechecked.guards];
  return { plan: { ...plan, guards }, current };
}

/** The answer may come minutes after the plan was shown: it is applied only if it still holds. */
export async function checkApprovedPlan(
  plan: Plan,
  client: ApiClient,
  options: RereadOptions,
): Promise<CurrentState> {
  const current = await readStateForPlan(plan, client, options);
  const reasons = findPlanProblems(plan, current);
  if (reasons.length > 0) throw new RefusedError("changed_while_asking", { reasons });
  return current;
}

export async function readStateForPlan(
  plan: Plan,
  client: ApiClient,
  options: RereadOptions & {
    /** The guards are not made again (a rollout's wave, approved whole): only deletes read whole. */
    noGuards?: boolean;
  },
): Promise<CurrentState> {
  // A reorder also reads what tells whether a rearrange is safe (reorder.ts). A family the plan
  // deletes from or updates is read whole, so guards and each delete's ownership can be rechecked.
  const deleting = new Set(
    (options.noGuards === true
      ? plan.changes.filter((change) => change.action === "delete")
      : guardedFamilies(plan)
    ).map((ref) => familyKey(ref.project, ref.family)),
  );
  const refs = listsToRead([
    ...familiesTouchedBy(plan).map((ref) => ({
      ...ref,
      wholeFamily: deleting.has(familyKey(ref.project, ref.family)),
    })),
    ...plan.reorders.map(({ project, family }) => ({ project, family, reordered: true })),
  ]);
  const read = await readCurrentState(client, refs, options);
  // A record that holds a create's name but runs another plugin may be another family's that the
  // list also shows (a frontend app in posthog-2024's plugin_configs), which the create does not
  // duplicate: the lists that tell are read too, for such families only.
  const listed = new Set(read.families.map((family) => familyKey(family.project, family.family)));
  const unsure = plan.changes.filter((change) => {
    if (change.action !== "create" || change.name === null) return false;
    const key = lookAlikeKey(change.name);
    const records = read.families.find(ofFamily(change.project, change.family))?.records ?? [];
    return records.some(
      (record) =>
        record.name !== null &&
        lookAlikeKey(record.name) === key &&
        record.plugin !== change.fields.plugin?.to,
    );
  });
  // A family whose own records the plan knew apart (ownMembership) and whose list changed: the lists
  // that tell them apart again.
  const regrouped = [...plan.changes.filter((change) => change.action === "delete"), ...plan.reorders].filter(
    ({ project, family }) => {
      const report = plan.families.find(ofFamily(project, family));
      const records = read.families.find(ofFamily(project, family))?.records;
      return (
        report?.ownMembership !== undefined && records !== undefined && !sameMembership(read, report, records)
      );
    },
  );
  const more = listsToRead(
    [...unsure, ...regrouped].map(({ project, family }) => ({ project, family, wholeFamily: true })),
  ).filter((ref) => !listed.has(familyKey(ref.project, ref.family)));
  if (more.length === 0) return read;
  return { families: [...read.families, ...(await readCurrentState(client, more, options)).families] };
}

export function findPlanProblems(plan: Plan, current: CurrentState): string[] {
  // A record the plan both changes and moves is checked for each: it is named once.
  return [...new Set([...findStaleness(plan, current), ...findOwnerProblems(plan, current)])];
}

export function checkPlanServer(plan: Plan, path: string, client: ApiClient): void {
  if (plan.server !== client.base.display)
    throw new RefusedError("plan_server_mismatch", {
      file: path,
      planServer: plan.server ?? "no server it names",
      server: client.base.display,
    });
}
