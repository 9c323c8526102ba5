// The events pcsync sends to webhooks: `watch`'s and a rollout's, in one shape so that one receiver,
// one payload format and one signature serve both.

import type { FamilyName } from "../families.js";
import type { PlannedChange, PlanSummary } from "../plan/types.js";

/** With the headline of its Slack message. */
export const EVENT_HEADLINES = {
  drift_opened: { icon: ":warning:", text: "drift found" },
  drift_changed: { icon: ":warning:", text: "drift changed" },
  drift_resolved: { icon: ":white_check_mark:", text: "back in sync" },
  healed: { icon: ":wrench:", text: "healed" },
  heal_flapping: { icon: ":repeat:", text: "heal keeps being undone; left alone for now" },
  guard_refused: { icon: ":no_entry:", text: "refused by a safety guard (nothing healed there)" },
  cycle_failed: { icon: ":x:", text: "cycle failed" },
  manifest_invalid: { icon: ":x:", text: "manifest invalid" },
  // A progressive rollout's (sent by `apply`, not by `watch`).
  rollout_wave_started: { icon: ":rocket:", text: "rollout wave started" },
  rollout_wave_passed: { icon: ":white_check_mark:", text: "rollout wave healthy" },
  rollout_halted: { icon: ":octagonal_sign:", text: "rollout halted by a failed health check" },
  rollout_rolled_back: { icon: ":rewind:", text: "rollout wave rolled back" },
  rollout_completed: { icon: ":tada:", text: "rollout complete" },
  rollout_stopped: {
    icon: ":pause_button:",
    text: "rollout stopped before a verdict; apply again to finish it",
  },
} as const satisfies Record<string, { icon: string; text: string }>;

export type EventName = keyof typeof EVENT_HEADLINES;

/** `summary` counts them all. */
export const MAX_EVENT_CHANGES = 50;

export interface PcsyncEvent {
  event: EventName;
  /** Null for the events about the whole cycle (cycle_failed, manifest_invalid). */
  project: string | null;
  family: FamilyName | null;
  summary: PlanSummary;
  changes: PlannedChange[];
  /** ISO 8601, UTC. */
  at: string;
  message?: string;
  rollout?: {
    wave: string;
    index: number;
    projects?: string[];
    verdicts?: { project: string; status: string; passed: boolean; summary: string }[];
  };
  journal?: string;
}
