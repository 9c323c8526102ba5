// Heal and `rollout:` together: a change to the manifest reaches the fleet through `apply`'s waves,
// never all at once through heal. Heal remembers, per family, what the manifest said of it when the
// watcher last saw it in sync; with `rollout:`, it writes a family only to put it back to that
// (drift), and holds a family whose manifest is new to it (a change, or one not yet seen in sync
// since the watcher started), reporting its drift until an apply has rolled it out.

import { familyKey } from "../families.js";
import { type DesiredState, type DriftMode, familyFingerprint, formatSource } from "../manifest/index.js";
import type { PlanDiagnostic } from "../plan/compute-plan.js";
import type { Plan } from "../plan/types.js";
import type { FamilyFinding } from "./cycle-log.js";

export const HELD_FOR_ROLLOUT =
  "not healed: with `rollout:`, heal only puts back what this watcher last saw in sync, and the manifest's version of this family is new to it (changed, or not seen in sync since the watcher started); `pcsync apply` rolls a change out in waves";

export class RolloutHold {
  /** Family key -> the fingerprint of the manifest's family when the family was last in sync. */
  readonly #inSync = new Map<string, string>();
  /** The last cycle held a family: a rollout may be under way, so nothing is learnt from it. */
  #holding = false;

  /**
   * The families in heal that heal must leave alone this cycle, as refusals: with `rollout:` in
   * the manifest, those with drift whose manifest differs from the one last seen in sync.
   */
  held(
    plan: Pick<Plan, "changes" | "reorders">,
    desired: Pick<DesiredState, "families" | "owner" | "rollout">,
    modes: ReadonlyMap<string, DriftMode>,
  ): PlanDiagnostic[] {
    this.#holding = false;
    if (desired.rollout === undefined) return [];
    const drifting = new Set(
      [...plan.changes, ...plan.reorders].map((item) => familyKey(item.project, item.family)),
    );
    const held = desired.families.flatMap((entry) => {
      const { project, family } = entry;
      const key = familyKey(project, family);
      if (!drifting.has(key) || modes.get(key) !== "heal") return [];
      if (this.#inSync.get(key) === familyFingerprint(entry, desired.owner?.name)) return [];
      return [{ project, family, source: formatSource(entry.source), message: HELD_FOR_ROLLOUT }];
    });
    this.#holding = held.length > 0;
    return held;
  }

  /**
   * Remembers the manifest of each family the cycle left in sync (as found, or as healed), unless
   * the cycle held a family. A change part-way through its rollout leaves the projects of its
   * first waves in sync with it and holds the rest: were those learnt, a wave rolled back after a
   * failed health check would be healed straight back to the change that failed.
   */
  observe(findings: readonly FamilyFinding[], desired: Pick<DesiredState, "families" | "owner">): void {
    if (this.#holding) return;
    const inSync = new Set(
      findings
        .filter(
          (item) => item.changes.length === 0 && item.reorder === undefined && item.refused === undefined,
        )
        .map((item) => familyKey(item.project, item.family)),
    );
    for (const family of desired.families) {
      const key = familyKey(family.project, family.family);
      if (inSync.has(key)) this.#inSync.set(key, familyFingerprint(family, desired.owner?.name));
    }
  }
}
