// A plan narrowed to some of its families: what watch's heal mode applies of a cycle's plan, and
// what each wave of a rollout writes of the run's plan. Pure.

import type { FamilyName } from "../families.js";
import { summarizePlan } from "./plan-file.js";
import type { Plan } from "./types.js";

export function selectFamilies(plan: Plan, keep: (project: string, family: FamilyName) => boolean): Plan {
  const changes = plan.changes.filter((change) => keep(change.project, change.family));
  const reorders = plan.reorders.filter((reorder) => keep(reorder.project, reorder.family));
  const families = plan.families.filter((family) => keep(family.project, family.family));
  const prefixes = families.map((family) => `${family.project}/${family.family}/`);
  return {
    ...plan,
    summary: summarizePlan(changes, reorders),
    changes,
    reorders,
    families,
    fingerprints: Object.fromEntries(
      Object.entries(plan.fingerprints).filter(([key]) => prefixes.some((prefix) => key.startsWith(prefix))),
    ),
    guards: plan.guards.filter((guard) => keep(guard.project, guard.family)),
  };
}
