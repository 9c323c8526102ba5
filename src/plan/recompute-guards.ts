// The delete and update guards recomputed from the state apply re-read: a saved plan's own `guards`
// can say anything. Also refuses deleting a record the re-read shows to be another family's. Pure.

import { type FamilyRef, familyKey, ofFamily } from "../families.js";
import { idsOfOtherFamiliesIn } from "../family-lists.js";
import { familiesTouchedBy } from "./check-stale.js";
import { ownerOf } from "./owner-plan.js";
import {
  countsAsUpdate,
  findGuard,
  findUpdateGuard,
  ownedForPrune,
  ownedForUpdates,
} from "./safety-guards.js";
import type { CurrentState, GuardViolation, Plan } from "./types.js";

export interface GuardOptions {
  maxDeletePercent: number;
  maxUpdatePercent: number;
}

/** `current` holds the whole list of each family the plan deletes from or updates, and those it shows. */
export function recomputeGuards(
  plan: Plan,
  current: CurrentState,
  options: GuardOptions,
): { guards: GuardViolation[]; reasons: string[] } {
  const guards: GuardViolation[] = [];
  const reasons: string[] = [];
  const keys = new Set(guardedFamilies(plan).map((ref) => familyKey(ref.project, ref.family)));
  for (const list of current.families) {
    if (!keys.has(familyKey(list.project, list.family))) continue;
    const { project, family } = list;
    const changes = plan.changes.filter(ofFamily(project, family));
    const others = idsOfOtherFamiliesIn(current, project, family);
    // Another family's record is that family's, unless this plan changes it through this one.
    const claimedHere = new Set(changes.flatMap((change) => (change.id === null ? [] : [change.id])));
    const owned = list.records.filter((record) => !others.has(record.id) || claimedHere.has(record.id));
    const deletes = changes.filter((change) => change.action === "delete");
    // The delete guard counts a prune's deletes, as the planner does: not those `deleted: true` asks for.
    const pruned = deletes.filter((change) => change.explicit !== true);
    // As the planner: an owner's prune is measured against the records it claims or has marked.
    const ownersOwn =
      plan.owner === undefined
        ? owned
        : owned.filter((record) => claimedHere.has(record.id) || ownerOf(record) === plan.owner);
    for (const change of deletes)
      if (change.id !== null && others.has(change.id))
        reasons.push(
          `record ${change.id} in project ${project} is another family's record that the ${family} list also shows; a prune of ${family} never deletes it`,
        );
    const updates = changes.filter(countsAsUpdate);
    const findings = [
      findGuard(
        {
          project,
          family,
          owned: ownedForPrune(ownersOwn, changes),
          creates: changes.filter((change) => change.action === "create").length,
          deletes: pruned.length,
          source: pruned[0]?.source ?? family,
          ...(plan.owner === undefined ? {} : { owner: plan.owner }),
        },
        options.maxDeletePercent,
      ),
      findUpdateGuard(
        {
          project,
          family,
          owned: ownedForUpdates(owned, changes),
          updates: updates.length,
          source: updates[0]?.source ?? family,
        },
        options.maxUpdatePercent,
      ),
    ];
    for (const finding of findings) if (finding) guards.push(finding);
  }
  return { guards, reasons };
}

export function guardedFamilies(plan: Plan): FamilyRef[] {
  const guarded = plan.changes.filter((change) => change.action === "delete" || countsAsUpdate(change));
  return familiesTouchedBy({ changes: guarded, reorders: [] });
}
