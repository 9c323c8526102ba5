// Checks that a saved plan holds together before anything is read or written, so that a hand-edited
// plan (a change moved, a delete appended, a fingerprint removed) is refused, not applied. Pure.

import { type FamilyName, familyKey } from "../families.js";
import { lookAlikeKey } from "../record-name.js";
import { describeUntrimmed, isTrimmedField } from "../trim-as-service.js";
import { recordKey } from "./fingerprint.js";
import type { FamilyReport, Plan } from "./types.js";

export function findPlanInconsistencies(plan: Plan): string[] {
  const problems: string[] = [];
  if (plan.server === undefined || plan.server === "") {
    problems.push("it names no server it was made against (`server`)");
  }
  const reports = new Map<string, FamilyReport>();
  const unmanagedIds = new Set<number>();
  for (const report of plan.families) {
    const key = familyKey(report.project, report.family);
    if (reports.has(key)) problems.push(`families lists project ${report.project} ${report.family} twice`);
    reports.set(key, report);
    for (const record of report.unmanaged) unmanagedIds.add(record.id);
    // With an owner, a prune leaves other owners' and unmarked records alone, and lists them.
    if (report.prune && plan.owner === undefined && report.unmanaged.length > 0) {
      problems.push(
        `project ${report.project} ${report.family} is pruned yet lists unmanaged records (a prune leaves none)`,
      );
    }
  }

  const reportFor = (what: string, project: string, family: FamilyName): FamilyReport | undefined => {
    const report = reports.get(familyKey(project, family));
    if (!report) problems.push(`${what}: the plan read no list of project ${project} ${family}`);
    return report;
  };
  const touched = new Map<number, string>();
  const touch = (what: string, project: string, family: FamilyName, id: number) => {
    const previous = touched.get(id);
    if (previous !== undefined) problems.push(`${what}: record ${id} is also in ${previous}`);
    else touched.set(id, what);
    if (plan.fingerprints[recordKey(project, family, id)] === undefined) {
      problems.push(
        `${what}: it carries no fingerprint of record ${id} as read in project ${project} ${family} (fingerprints["${recordKey(project, family, id)}"]), so a change since could not be seen`,
      );
    }
    if (unmanagedIds.has(id))
      problems.push(`${what}: record ${id} is listed as unmanaged, which a plan never touches`);
  };

  const creates = new Set<string>();
  for (const [index, change] of plan.changes.entries()) {
    const what = `changes[${index}] (${change.action}${change.id === null ? "" : ` record ${change.id}`} in project ${change.project} ${change.family})`;
    const report = reportFor(what, change.project, change.family);
    for (const [field, fieldChange] of Object.entries(change.fields)) {
      if (!isTrimmedField(field) || typeof fieldChange.to !== "string") continue;
      const problem = describeUntrimmed(field, fieldChange.to);
      if (problem !== undefined) problems.push(`${what}: ${problem}`);
    }
    // Every check goes by the name a create or rename sends: a plan the planner made never has two.
    const sends = change.fields.name;
    if (
      change.action === "create"
        ? (sends?.to ?? null) !== change.name
        : sends !== undefined && sends.to !== change.name
    )
      problems.push(`${what}: the name it sends (fields.name.to) is not its name (name)`);
    if (change.action === "create" || sends !== undefined) {
      const key = `${familyKey(change.project, change.family)}/${lookAlikeKey(change.name ?? "")}`;
      if (creates.has(key))
        problems.push(`${what}: another create or rename in the plan gives a record this name`);
      creates.add(key);
    }
    if (change.action === "create") continue;
    // An update or delete without a record id is refused by the plan's schema, before this check.
    if (change.id === null) continue;
    touch(what, change.project, change.family, change.id);
    if (change.action === "delete" && change.explicit !== true && report && !report.prune) {
      problems.push(
        `${what}: project ${change.project} ${change.family} is not pruned in this plan, so nothing in it is deleted`,
      );
    }
  }
  for (const [index, reorder] of plan.reorders.entries()) {
    const what = `reorders[${index}] (project ${reorder.project} ${reorder.family})`;
    reportFor(what, reorder.project, reorder.family);
    const moved = new Set<number>();
    for (const move of reorder.moves) {
      if (moved.has(move.id)) problems.push(`${what}: record ${move.id} is moved twice`);
      moved.add(move.id);
      // A record both updated and moved is one record touched twice: that is how plans are made.
      if (plan.fingerprints[recordKey(reorder.project, reorder.family, move.id)] === undefined) {
        problems.push(
          `${what}: it carries no fingerprint of record ${move.id}, so a change since could not be seen`,
        );
      }
      if (unmanagedIds.has(move.id)) {
        problems.push(`${what}: record ${move.id} is listed as unmanaged, which a plan never moves`);
      }
    }
  }
  return problems;
}
