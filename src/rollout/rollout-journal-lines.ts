// The rollout journal's lines as types: what schemas/rollout-journal.schema.json allows, which the
// rollout's journal (rollout-journal.ts) and its validator (rollout-journal-validator.ts) both name.

import type { FamilyName } from "../families.js";
import type { PlanRollout } from "../plan/types.js";
import type { ProjectHealth } from "./health-gate.js";

/** A plugin config the rollout's plan creates or updates: what the gate judges. */
export interface RolloutTarget {
  project: string;
  family: FamilyName;
  name: string;
  /** The record an update writes. */
  id?: number;
  /**
   * The plugin a create runs: its record is the one of its name and plugin, since a list may also
   * show another family's record of that name (posthog-2024's plugin_configs lists the frontend apps).
   */
  plugin?: number;
  /**
   * What the manifest asks of this config but its order (configFingerprint): a halt holds for a
   * later manifest that asks the config the same, whatever else it changes. Absent in older journals.
   */
  asks?: string;
}

export interface RolloutHeader {
  kind: "rollout";
  version: 1;
  server: string;
  /** What ties the journal to the change it rolls out (rolloutDigest): a new change is a new rollout. */
  digest: string;
  startedAt: string;
  rollout: PlanRollout;
  targets: RolloutTarget[];
}

export type RolloutLine =
  | { kind: "wave_started"; wave: number; journal: string; at: string }
  | { kind: "wave_written"; wave: number; at: string }
  | { kind: "wave_judged"; wave: number; at: string; healthy: boolean; verdicts: ProjectHealth[] }
  | { kind: "halted"; wave: number; at: string; failing: string[] }
  | { kind: "wave_rolled_back"; wave: number; at: string; complete: boolean }
  | { kind: "end"; at: string; result: "complete" | "halted" };

/** A line of the file, as schemas/rollout-journal.schema.json allows it. */
export type RolloutJournalLine = RolloutHeader | RolloutLine;
