// Whether a saved plan still describes what apply re-read: every record it touches, and the membership
// of every family it prunes or reorders, must be as when it was made. Pure.

import { type FamilyName, type FamilyRef, familyKey, ofFamily } from "../families.js";
import { idsOfOtherFamiliesIn, isAnotherFamilysConfig, showsOtherFamiliesOf } from "../family-lists.js";
import { lookAlikeKey } from "../record-name.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { fingerprintMembership, fingerprintRecord, recordKey } from "./fingerprint.js";
import type { CurrentState, FamilyReport, Plan } from "./types.js";

export function familiesTouchedBy(plan: Pick<Plan, "changes" | "reorders">): FamilyRef[] {
  const refs = new Map<string, FamilyRef>();
  for (const item of [...plan.changes, ...plan.reorders]) {
    refs.set(familyKey(item.project, item.family), { project: item.project, family: item.family });
  }
  return [...refs.values()];
}

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
      // Not another family's record running another plugin: the planner never takes one for the config's.
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
 * Whether the list holds the records it held when planned: all, or its own (`ownMembership`) where
 * the lists tell them apart, so a frontend app made since leaves a plugin_configs plan standing.
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
