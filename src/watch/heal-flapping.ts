// A record healed 3 cycles in a row is flapping (something else keeps changing it, and healing only
// makes the two fight): it is left alone for a backoff that doubles each time it flaps again.

import { type FamilyRef, familyKey } from "../families.js";
import { summarizePlan } from "../plan/plan-file.js";
import type { Plan, PlannedChange } from "../plan/types.js";
import type { FamilyFinding } from "./cycle-log.js";
import { monotonicNow } from "./monotonic-clock.js";

export const FLAP_CYCLES = 3;
export const MAX_FLAP_BACKOFF_MS = 3_600_000;

interface RecordMemory extends FamilyRef {
  streak: number;
  /** Set once it flaps. */
  backoffMs?: number;
  until?: number | undefined;
  /** Cycles that left it alone in this backoff: at least one does, however long cycles take. */
  heldCycles?: number;
}

// A create or delete goes by name: a record deleted or created each cycle comes back with a new id.
function recordKey(change: PlannedChange): string {
  const record = change.action === "update" ? `id:${change.id}` : `${change.action}:${change.name}`;
  return `${familyKey(change.project, change.family)}\u0000${record}`;
}

export interface HeldBack {
  plan: Plan;
  /** The changes left alone, by family key. */
  held: Map<string, PlannedChange[]>;
}

export class FlapTracker {
  readonly #firstBackoffMs: number;
  readonly #now: () => number;
  readonly #records = new Map<string, RecordMemory>();

  constructor(options: { firstBackoffMs: number; now?: () => number }) {
    this.#firstBackoffMs = Math.min(options.firstBackoffMs, MAX_FLAP_BACKOFF_MS);
    this.#now = options.now ?? monotonicNow;
  }

  hold(plan: Plan): HeldBack {
    const now = this.#now();
    const held = new Map<string, PlannedChange[]>();
    const changes = plan.changes.filter((change) => {
      const memory = this.#records.get(recordKey(change));
      if (memory?.until === undefined) return true;
      if (now >= memory.until && (memory.heldCycles ?? 0) > 0) return true;
      memory.heldCycles = (memory.heldCycles ?? 0) + 1;
      const key = familyKey(change.project, change.family);
      held.set(key, [...(held.get(key) ?? []), change]);
      return false;
    });
    if (held.size === 0) return { plan, held };
    return { plan: { ...plan, changes, summary: summarizePlan(changes, plan.reorders) }, held };
  }

  /** Puts the changes left alone back among the drift (only heal leaves them), with the flapping records. */
  observe(findings: readonly FamilyFinding[], held: ReadonlyMap<string, PlannedChange[]>): FamilyFinding[] {
    const now = this.#now();
    const watched = new Set(findings.map((finding) => familyKey(finding.project, finding.family)));
    // A family that left the manifest takes its memory with it.
    for (const [key, memory] of this.#records) {
      if (!watched.has(familyKey(memory.project, memory.family))) this.#records.delete(key);
    }
    return findings.map((finding) => {
      const family = familyKey(finding.project, finding.family);
      const heldHere = held.get(family) ?? [];
      const healed = new Set((finding.healed?.changes ?? []).map(recordKey));
      const drifting = new Set([...finding.changes, ...heldHere].map(recordKey));
      const started: { change: PlannedChange; backoffMs: number }[] = [];
      for (const change of finding.healed?.changes ?? []) {
        const key = recordKey(change);
        const memory = this.#records.get(key) ?? {
          project: change.project,
          family: change.family,
          streak: 0,
        };
        // Healed once more after its backoff: one more heal in a row, and it is flapping again.
        if (memory.until !== undefined && now >= memory.until && (memory.heldCycles ?? 0) > 0) {
          memory.streak = FLAP_CYCLES - 2;
          memory.until = undefined;
        }
        memory.streak += 1;
        if (memory.streak >= FLAP_CYCLES) {
          // Flapping again after its backoff: twice as long this time.
          memory.backoffMs =
            memory.backoffMs === undefined
              ? this.#firstBackoffMs
              : Math.min(2 * memory.backoffMs, MAX_FLAP_BACKOFF_MS);
          memory.until = now + memory.backoffMs;
          memory.heldCycles = 0;
          started.push({ change, backoffMs: memory.backoffMs });
        }
        this.#records.set(key, memory);
      }
      let flapping = 0;
      for (const [key, memory] of this.#records) {
        if (familyKey(memory.project, memory.family) !== family) continue;
        // Stayed put (not healed, nothing to heal): the count starts again.
        if (!healed.has(key) && !drifting.has(key)) {
          this.#records.delete(key);
          continue;
        }
        // Drifting and not healed (warn mode, a guard, a failed write): the row is broken.
        if (!healed.has(key) && memory.backoffMs === undefined) memory.streak = 0;
        if (memory.backoffMs !== undefined) flapping += 1;
      }
      const withHeld =
        heldHere.length === 0 ? finding : { ...finding, changes: [...finding.changes, ...heldHere] };
      return flapping === 0 && started.length === 0
        ? withHeld
        : { ...withHeld, flapping: { records: flapping, started } };
    });
  }
}

/** `4 s`, `2 min`, `1 h`. */
export function describeBackoff(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}
