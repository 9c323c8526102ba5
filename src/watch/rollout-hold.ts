// Heal and `rollout:` together: a change to the manifest reaches the fleet through `apply`'s waves,
// never all at once through heal. Heal remembers, per family, a version of the manifest it has seen
// the family in sync with for long enough (the rollout's bake and --rollout-settle, in a row, with
// no family held meanwhile); with `rollout:`, it writes a family only to put it back to that
// (drift), and holds a family whose manifest is new to it (a change, one not yet seen in sync since
// the watcher started, or not for that long), reporting its drift until an apply has rolled it out.
// "Long enough": a rollout's last wave (or the only one) leaves every family in sync with the
// change while it bakes, is judged, and may be rolled back; learnt then, the change would be healed
// straight back onto the fleet that just rolled it back.

import { familyKey } from "../families.js";
import { type DesiredState, type DriftMode, familyFingerprint, formatSource } from "../manifest/index.js";
import type { PlanDiagnostic } from "../plan/compute-plan.js";
import type { Plan } from "../plan/types.js";
import type { FamilyFinding } from "./cycle-log.js";
import { monotonicNow } from "./monotonic-clock.js";

/** How long beyond the rollout's bake a version must stay in sync before heal puts it back (--rollout-settle). */
export const DEFAULT_ROLLOUT_SETTLE_MS = 15 * 60_000;

export const HELD_FOR_ROLLOUT =
  "not healed: with `rollout:`, heal only puts back what this watcher has seen in sync for the rollout's bake and --rollout-settle in a row, and the manifest's version of this family is new to it (changed, not seen in sync since the watcher started, or not for that long: a rollout may still roll it back); `pcsync apply` rolls a change out in waves";

export class RolloutHold {
  /** Family key -> the fingerprint of the manifest's family heal puts it back to. */
  readonly #learnt = new Map<string, string>();
  /** Family key -> the version it is in sync with now, and since when (continuously). */
  readonly #inSyncSince = new Map<string, { fingerprint: string; since: number }>();
  /** The last cycle held a family: a rollout may be under way, so nothing is learnt from it. */
  #holding = false;
  readonly #settleMs: number;
  readonly #now: () => number;
  /**
   * The longest bake the manifest has said since the watcher started: a rollout keeps the bake it
   * started with, so a bake shortened in the file meanwhile must not shorten the wait.
   */
  #bakeMs = 0;

  /** `settleMs`: --rollout-settle; `now`: the monotonic clock (tests). */
  constructor(options: { settleMs: number; now?: () => number }) {
    this.#settleMs = options.settleMs;
    this.#now = options.now ?? monotonicNow;
  }

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
      if (this.#learnt.get(key) === familyFingerprint(entry, desired.owner?.name)) return [];
      return [{ project, family, source: formatSource(entry.source), message: HELD_FOR_ROLLOUT }];
    });
    this.#holding = held.length > 0;
    return held;
  }

  /**
   * Learns the manifest of each family the cycle left in sync (as found, or as healed) once it has
   * been in sync with it for the rollout's bake and the settle time, in cycles that held nothing. A
   * change part-way through its rollout leaves the projects of its first waves in sync with it and
   * holds the rest, and its last wave leaves all in sync while it bakes and is judged: were either
   * learnt, a wave rolled back after a failed health check would be healed straight back to the
   * change that failed. So a cycle that holds a family starts every count again.
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
