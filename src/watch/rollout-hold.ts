// With `rollout:`, a manifest change reaches the fleet through apply's waves, never all at once through
// heal: heal only puts a family back to a version it saw in sync for the bake and --rollout-settle.

import { familyKey } from "../families.js";
import { type DesiredState, type DriftMode, familyFingerprint, formatSource } from "../manifest/index.js";
import type { PlanDiagnostic } from "../plan/compute-plan.js";
import type { Plan } from "../plan/types.js";
import type { FamilyFinding } from "./cycle-log.js";
import { monotonicNow } from "./monotonic-clock.js";

export const DEFAULT_ROLLOUT_SETTLE_MS = 15 * 60_000;

export const HELD_FOR_ROLLOUT =
  "not healed: with `rollout:`, heal only puts back what this watcher has seen in sync for the rollout's bake and --rollout-settle in a row, and the manifest's version of this family is new to it (changed, not seen in sync since the watcher started, or not for that long: a rollout may still roll it back); `pcsync apply` rolls a change out in waves";

export class RolloutHold {
  /** Family key -> the fingerprint of the manifest's family heal puts it back to. */
  readonly #learnt = new Map<string, string>();
  readonly #inSyncSince = new Map<string, { fingerprint: string; since: number }>();
  /** The last cycle held a family: a rollout may be under way, so nothing is learnt from it. */
  #holding = false;
  readonly #settleMs: number;
  readonly #now: () => number;
  /** The longest bake since start: a rollout keeps its bake, though the file shortens it meanwhile. */
  #bakeMs = 0;

  constructor(options: { settleMs: number; now?: () => number }) {
    this.#settleMs = options.settleMs;
    this.#now = options.now ?? monotonicNow;
  }

  /** As refusals: the drifting families in heal whose manifest is not the one learnt in sync. */
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
      if (this.#learnt.get(key) === familyFingerprint(entry, desired.owner?.name)) return [];
      return [{ project, family, source: formatSource(entry.source), message: HELD_FOR_ROLLOUT }];
    });
    this.#holding = held.length > 0;
    return held;
  }

  /**
   * Learns a family's manifest once in sync with it for the bake and settle time, in cycles that held
   * nothing: a rollout under way, or its last wave baking, is in sync too, and learnt then, a wave
   * rolled back after a failed health check would be healed straight back to the change that failed.
   */
  observe(
    findings: readonly FamilyFinding[],
    desired: Pick<DesiredState, "families" | "owner" | "rollout">,
  ): void {
    this.#bakeMs = Math.max(this.#bakeMs, desired.rollout?.bakeMs ?? 0);
    if (this.#holding) {
      this.#inSyncSince.clear();
      return;
    }
    const now = this.#now();
    const settle = this.#bakeMs + this.#settleMs;
    const inSync = new Set(
      findings
        .filter(
          (item) => item.changes.length === 0 && item.reorder === undefined && item.refused === undefined,
        )
        .map((item) => familyKey(item.project, item.family)),
    );
    for (const family of desired.families) {
      const key = familyKey(family.project, family.family);
      if (!inSync.has(key)) {
        this.#inSyncSince.delete(key);
        continue;
      }
      const fingerprint = familyFingerprint(family, desired.owner?.name);
      const seen = this.#inSyncSince.get(key);
      const since = seen?.fingerprint === fingerprint ? seen.since : now;
      this.#inSyncSince.set(key, { fingerprint, since });
      if (now - since >= settle) this.#learnt.set(key, fingerprint);
    }
  }
}
