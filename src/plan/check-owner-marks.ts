// The owner rules, checked again on the state apply re-read, so a hand-edited or waiting plan gets no
// more than a planned one: delete only marked records, write another's only as planned adoption/takeover.

import { readMark } from "../owner-mark.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { recordKey } from "./fingerprint.js";
import type { CurrentState, Plan, PlannedChange } from "./types.js";

function describeOwner(owner: string | null): string {
  return owner === null ? "no owner mark" : `the mark of owner "${owner}"`;
}

export function findOwnerProblems(plan: Plan, current: CurrentState): string[] {
  const problems: string[] = [];
  const owner = plan.owner;
  const records = new Map<string, PluginConfigRecord>();
  for (const list of current.families) {
    for (const record of list.records) records.set(recordKey(list.project, list.family, record.id), record);
  }
  const label = (change: { project: string; family: string; id: number | null; name: string | null }) =>
    `record ${change.id ?? "to create"}${change.name === null ? "" : ` ("${change.name}")`} in project ${change.project} ${change.family}`;

  // Records this plan adopts or takes over, by the owner it found on them: moves may follow.
  const changingHands = new Set<string>();
  for (const change of plan.changes) {
    const problem = ownerProblem(plan, change, records);
    if (problem !== undefined) problems.push(`${label(change)}: ${problem}`);
    if (change.mark?.from !== undefined && change.id !== null)
      changingHands.add(recordKey(change.project, change.family, change.id));
  }
  if (owner === undefined) return problems;
  for (const reorder of plan.reorders) {
    for (const move of reorder.moves) {
      const key = recordKey(reorder.project, reorder.family, move.id);
      const record = records.get(key);
      if (record === undefined || changingHands.has(key)) continue;
      const found = readMark(record.description).owner;
      if (found !== owner) {
        problems.push(
          `${label({ ...reorder, id: move.id, name: move.name })}: the plan moves it, but it carries ${describeOwner(found)}, not owner "${owner}"'s`,
        );
      }
    }
  }
  return problems;
}

function ownerProblem(
  plan: Plan,
  change: PlannedChange,
  records: ReadonlyMap<string, PluginConfigRecord>,
): string | undefined {
  const owner = plan.owner;
  if (owner === undefined) {
    return change.mark === undefined
      ? undefined
      : "the change writes an owner mark, but the plan names no owner";
  }
  if (change.mark !== undefined && change.mark.owner !== owner) {
    return `the change writes the mark of owner "${change.mark.owner}", but the plan is owner "${owner}"'s`;
  }
  if (change.action === "create") {
    return change.mark === undefined ? `the create carries no mark of owner "${owner}"` : undefined;
  }
  if (change.id === null) return undefined;
  const record = records.get(recordKey(change.project, change.family, change.id));
  // A record that is gone is the stale check's to report.
  if (record === undefined) return undefined;
  const found = readMark(record.description).owner;
  if (found === owner) return undefined;
  if (change.action === "delete") {
    // `deleted: true` names the record: one without a mark is deleted as the planner deleted it,
    // another owner's only as a takeover.
    if (change.explicit !== true)
      return `prune deletes only records with the mark of owner "${owner}", and it carries ${describeOwner(found)}`;
    if (found === null || plan.takeover === true) return undefined;
    return `it carries ${describeOwner(found)}: deleting it (deleted: true) needs a plan made with --takeover`;
  }
  if (change.mark?.from !== found) {
    return `it carries ${describeOwner(found)}, and the plan does not ${found === null ? "adopt" : "take over"} it for owner "${owner}"`;
  }
  if (found !== null && plan.takeover !== true) {
    return `it carries ${describeOwner(found)}: taking it over needs a plan made with --takeover`;
  }
  return undefined;
}
