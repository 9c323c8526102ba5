// The events pcsync sends out (to webhooks, as counters): `watch`'s about drift, heals and cycles,
// and a progressive rollout's about its waves, which `apply` sends. One shape for both, so that one
// receiver, one payload format and one signature serve them.

import type { FamilyName } from "../families.js";
import type { PlannedChange, PlanSummary } from "../plan/types.js";

export const EVENT_NAMES = [
  "drift_opened",
  "drift_changed",
  "drift_resolved",
  "healed",
  "heal_flapping",
  "guard_refused",
  "cycle_failed",
  "manifest_invalid",
  // A progressive rollout's (sent by `apply`, not by `watch`).
  "rollout_wave_started",
  "rollout_wave_passed",
  "rollout_halted",
  "rollout_rolled_back",
  "rollout_completed",
  "rollout_stopped",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** Changes an event carries at most; `summary` counts them all. */
export const MAX_EVENT_CHANGES = 50;

export interface PcsyncEvent {
  event: EventName;
  /** Null for the events about the whole cycle (cycle_failed, manifest_invalid). */
  project: string | null;
  family: FamilyName | null;
  summary: PlanSummary;
  /** As in the JSON plan, at most MAX_EVENT_CHANGES. */
  changes: PlannedChange[];
  /** ISO 8601, UTC. */
  at: string;
  /** What happened, in words: the guard, the error, the first manifest errors with file:line. */
  message?: string;
  /** A rollout's event: the wave, its projects, and the verdicts it was judged on. */
  rollout?: {
    wave: string;
    index: number;
    projects?: string[];
    verdicts?: { project: string; status: string; passed: boolean; summary: string }[];
  };
  /** `healed`: the journal of the heal (`pcsync rollback --journal` undoes it). */
  journal?: string;
}
