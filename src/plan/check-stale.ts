// Decides whether a saved plan still describes the world: pure, from the plan and what apply
// re-read. Any record the plan touches, or the membership of a family it prunes or reorders,
// must be as it was when the plan was made.

import { type FamilyName, type FamilyRef, familyKey, ofFamily } from "../families.js";
import { idsOfOtherFamiliesIn, isAnotherFamilysConfig, showsOtherFamiliesOf } from "../family-lists.js";
import { lookAlikeKey } from "../record-name.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { fingerprintMembership, fingerprintRecord, recordKey } from "./fingerprint.js";
import type { CurrentState, FamilyReport, Plan } from "./types.js";

/** The families `apply --plan` must re-read: those with a change or a reorder, each once. */
export function familiesTouchedBy(plan: Pick<Plan, "changes" | "reorders">): FamilyRef[] {
  const refs = new Map<string, FamilyRef>();
  for (const item of [...plan.changes, ...plan.reorders]) {
    refs.set(familyKey(item.project, item.family), { project: item.project, family: item.family });
  }
  return [...refs.values()];
}

/** Human-readable reasons the plan is stale; empty when it is not. */
export function findStaleness(plan: Plan, current: CurrentState): string[] {
  const reasons: string[] = [];
  const listOf = (project: string, family: string) =>
    current.families.find(ofFamily(project, family))?.records;

  const checkRecord = (project: string, family: FamilyName, id: number, name: string | null) => {
    const records = listOf(project, family);
    if (!records) return;
    const label = `record ${id}${name === null ? "" : ` ("${name}")`} in project ${project} ${family}`;
    const record = records.find((candidate) => candidate.id === id);
    if (!record) {
      reasons.push(`${label} is gone`);
      return;
    }
    const expected = plan.fingerprints[recordKey(project, family, id)];
    if (expected === undefined) reasons.push(`${label} has no fingerprint in the plan to check it against`);
    else if (fingerprintRecord(record) !== expected) reasons.push(`${label} was changed`);
  };

  const membershipChecked = new Set<string>();
  const checkMembership = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    if (membershipChecked.has(key)) return;
    membershipChecked.add(key);
    const records = listOf(project, family);
    const report = plan.families.find(ofFamily(project, family));
    if (!records || !report) return;
    if (!sameMembership(current, report, records)) {
      reasons.push(
        `the set of records in project ${project} ${family} changed (records were added or removed)`,
      );
    }
  };

  for (const change of plan.changes) {
    if (change.action === "create") {
      const records = listOf(change.project, change.family) ?? [];
      // Also a look-alike (trim-as-service.ts): on a trimming service it may be the very record.
      const key = change.name === null ? null : lookAlikeKey(change.name);
      // Not a record of another family that this list also shows (posthog-2024's plugin_configs
      // lists the frontend apps) and that runs another plugin: the planner never takes one for
      // the config's record (compute-plan.ts), so the create does not make a second one.
      const others = idsOfOtherFamiliesIn(current, change.project, change.family);
      const plugin = change.fields.plugin?.to;
      const existing = records.find(
        (record) =>
          record.name !== null &&
          lookAlikeKey(record.name) === key &&
          !isAnotherFamilysConfig(record, plugin, others),
      );
      if (existing) {
        reasons.push(
          `a record named "${change.name}" (id ${existing.id}) now exists in project ${change.project} ${change.family}; the plan would create a second one`,
        );
      }
      continue;
    }
    if (change.id !== null) checkRecord(change.project, change.family, change.id, change.name);
    if (change.action === "delete") checkMembership(change.project, change.family);
  }
  for (const reorder of plan.reorders) {
    for (const move of reorder.moves) checkRecord(reorder.project, reorder.family, move.id, move.name);
    checkMembership(reorder.project, reorder.family);
  }
  return reasons;
}

/**
 * Whether a family's list holds the records it held when the plan was made: all of them, or, where
 * the plan knew which were another family's (`ownMembership`) and the lists read now tell it
 * again, its own. A frontend app made or deleted since (posthog-2024 lists them in plugin_configs)
 * leaves a plan that prunes or reorders plugin_configs standing; a plugin config does not.
 */
export function sameMembership(
  current: CurrentState,
  report: Pick<FamilyReport, "project" | "family" | "membership" | "ownMembership">,
  records: readonly PluginConfigRecord[],
): boolean {
  if (fingerprintMembership(records) === report.membership) return true;
  const lists = current.families.filter((list) => list.project === report.project);
  if (report.ownMembership === undefined || !showsOtherFamiliesOf(report.family, lists)) return false;
  const others = idsOfOtherFamiliesIn(current, report.project, report.family);
  return fingerprintMembership(records.filter((record) => !others.has(record.id))) === report.ownMembership;
}
