// A project's drift as soon as its plan is known, before the cycle ends: the cycle reads and plans
// every project before it reports, so at 1,000 projects an edit read early in a cycle would wait
// for the whole read (and, cycles back to back, for the next) before its gauge moved.

import { familyKey } from "../families.js";
import type { DesiredFamily, DriftMode } from "../manifest/types.js";
import type { ProjectPlan } from "../plan/compute-plan.js";
import { driftCount } from "./cycle-log.js";
import { findingOf, modesOf } from "./heal.js";
import type { DriftCounts } from "./watch-metrics.js";

/**
 * The drift counts of a project's freshly made plan that the cycle's end will report unchanged:
 * each family not in heal (nothing this cycle writes changes its drift), and each family in heal
 * that is in sync. A family in heal that drifts is left out: what remains after heal is known only
 * once heal has run. Nothing for a project whose plan has errors (the cycle then fails and makes
 * no plan); a config that another owner's record refuses (`refused`) still leaves a plan.
 */
export function earlyDriftOf(
  part: Readonly<ProjectPlan>,
  desired: readonly DesiredFamily[],
  fallback: DriftMode,
): DriftCounts {
  const counts = new Map<string, { project: string; family: DesiredFamily["family"]; changes: number }>();
  if (part.errors.some((error) => error.refused !== true)) return counts;
  const modes = modesOf({ families: desired }, fallback);
  for (const { project, family } of part.families) {
    const key = familyKey(project, family);
    const changes = driftCount(findingOf(part, project, family));
    if ((modes.get(key) ?? fallback) === "heal" && changes > 0) continue;
    counts.set(key, { project, family, changes });
  }
  return counts;
}
