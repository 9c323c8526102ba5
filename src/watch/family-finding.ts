// What one watch cycle found for one family, as heal, the flapping memory, the events and the
// cycle's log line read it: a type of its own, so that none of them imports another for it.

import type { FamilyRef } from "../families.js";
import type { PlannedChange, PlannedReorder } from "../plan/types.js";

/** What one cycle found for one watched family. */
export interface FamilyFinding extends FamilyRef {
  /** The drift left at the end of the cycle (after heal: what it did not do). */
  changes: PlannedChange[];
  reorder: PlannedReorder | undefined;
  /** What heal applied this cycle, if it applied anything, and the journal that undoes it. */
  healed?: { changes: PlannedChange[]; reorder: PlannedReorder | undefined; journal?: string };
  /** Heal was refused by these guards: nothing was written to the family. */
  refused?: string[];
  /**
   * Records heal keeps putting back (heal-flapping.ts): how many are flapping now, and those that
   * started to (or flapped again) this cycle, with how long they are now left alone.
   */
  flapping?: { records: number; started: { change: PlannedChange; backoffMs: number }[] };
}
