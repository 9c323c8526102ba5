// A rollout's events as the webhooks of `watch` carry them: the same body, headers, signature and
// delivery (src/watch/webhook-sender.ts), so that one receiver serves the drift service and rollouts.

import type { PcsyncEvent } from "../notify/event.js";
import { plural } from "../plural.js";
import type { RolloutEvent } from "./run-rollout.js";

const NO_CHANGES = { create: 0, update: 0, delete: 0, reorder: 0 };

export function rolloutWebhookEvent(event: RolloutEvent, at: Date): PcsyncEvent {
  const base = {
    event: event.event,
    project: null,
    family: null,
    summary: NO_CHANGES,
    changes: [],
    at: at.toISOString(),
  };
  switch (event.event) {
    case "rollout_wave_started":
      return {
        ...base,
        message: `wave "${event.wave}" started: ${plural(event.projects.length, "project")}`,
        rollout: { wave: event.wave, index: event.index, projects: event.projects },
      };
    case "rollout_wave_passed":
      return {
        ...base,
        message: `wave "${event.wave}" is healthy`,
        rollout: { wave: event.wave, index: event.index, verdicts: event.verdicts.map(verdictOf) },
      };
    case "rollout_halted":
      return {
        ...base,
        message: `wave "${event.wave}" failed its health check: ${event.failing.map((verdict) => `project ${verdict.project}: ${verdict.summary}`).join("; ")}`,
        rollout: { wave: event.wave, index: event.index, verdicts: event.failing.map(verdictOf) },
      };
    case "rollout_rolled_back":
      return {
        ...base,
        message: `wave "${event.wave}" ${event.complete ? "rolled back" : "not wholly rolled back: records were changed since"}`,
        rollout: { wave: event.wave, index: event.index },
      };
    case "rollout_completed":
      return { ...base, message: `every wave (${event.waves}) written and judged healthy` };
    case "rollout_stopped":
      return {
        ...base,
        message: `stopped in wave "${event.wave}" (${event.reason}): ${event.detail}; applying the same manifest again finishes it`,
        rollout: { wave: event.wave, index: event.index },
      };
  }
}

function verdictOf(verdict: { project: string; status: string; passed: boolean; summary: string }) {
  return {
    project: verdict.project,
    status: verdict.status,
    passed: verdict.passed,
    summary: verdict.summary,
  };
}
