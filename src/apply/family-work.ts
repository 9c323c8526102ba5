// The plan's changes and reorders grouped by project + family: apply's unit of work.

import { type FamilyName, familyKey } from "../families.js";
import { groupBy } from "../group-by.js";
import type { Plan, PlannedChange, PlannedReorder } from "../plan/types.js";

export interface FamilyWork {
  project: string;
  family: FamilyName;
  changes: PlannedChange[];
  reorder: PlannedReorder | undefined;
}

/** One unit per project + family with changes or a reorder, in the order first met in the plan. */
export function groupWork(plan: Plan): FamilyWork[] {
  const changes = groupBy(plan.changes, (change) => familyKey(change.project, change.family));
  const reorders = new Map(
    plan.reorders.map((reorder) => [familyKey(reorder.project, reorder.family), reorder]),
  );
  const work: FamilyWork[] = [];
  for (const key of new Set([...changes.keys(), ...reorders.keys()])) {
    const familyChanges = changes.get(key) ?? [];
    const reorder = reorders.get(key);
    const first = familyChanges[0] ?? reorder;
    if (first === undefined) continue;
    work.push({ project: first.project, family: first.family, changes: familyChanges, reorder });
  }
  return work;
}
