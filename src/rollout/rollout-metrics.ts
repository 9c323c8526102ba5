// A rollout's metrics, for `apply --metrics-file` (node_exporter's textfile collector): made with
// prom-client and rendered as watch's metrics are, so that one scrape config and one alert style serve both.

import { Counter, Gauge, Registry } from "prom-client";
import type { SecretRegistry } from "../redact.js";
import type { RolloutEvent } from "./run-rollout.js";

/** Where a wave stands, as the state set `pcsync_rollout_wave_status{wave,status}` says it. */
export const WAVE_STATUSES = ["pending", "started", "passed", "halted", "rolled_back"] as const;
export type WaveStatus = (typeof WAVE_STATUSES)[number];

/** The events counted by `pcsync_rollout_events_total{event}`, each shown from the start at 0. */
export const ROLLOUT_EVENTS = [
  "rollout_wave_started",
  "rollout_wave_passed",
  "rollout_halted",
  "rollout_rolled_back",
  "rollout_completed",
  "rollout_stopped",
] as const satisfies readonly RolloutEvent["event"][];

export interface RolloutMetrics {
  readonly registry: Registry;
  readonly secrets: SecretRegistry;
  /** Records one event of the rollout, at `at`. */
  record(event: RolloutEvent, at: Date): void;
}

/**
 * The metrics of a rollout of `waves`; `statuses` says where each wave stands already (a resumed
 * rollout's journal), pending when not given.
 */
export function createRolloutMetrics(
  waves: readonly string[],
  secrets: SecretRegistry,
  statuses: readonly WaveStatus[] = [],
): RolloutMetrics {
  const registry = new Registry();
  const registers = [registry];
  const events = new Counter({
    name: "pcsync_rollout_events_total",
    help: "Rollout events of this run: a wave started, passed, the rollout halted, a wave rolled back, the rollout completed or stopped short of a verdict.",
    labelNames: ["event"],
    registers,
  });
  const waveStatus = new Gauge({
    name: "pcsync_rollout_wave_status",
    help: "Where each wave stands: 1 for its status (pending, started, passed, halted, rolled_back), 0 for the others.",
    labelNames: ["wave", "status"],
    registers,
  });
  const failing = new Gauge({
    name: "pcsync_rollout_failing_projects",
    help: "Projects of the wave that failed its health check when it was judged.",
    labelNames: ["wave"],
    registers,
  });
  const lastEvent = new Gauge({
    name: "pcsync_rollout_last_event_timestamp_seconds",
    help: "When the rollout last started, passed, halted or rolled back a wave, or completed or stopped (Unix time).",
    registers,
  });
  const complete = new Gauge({
    name: "pcsync_rollout_complete",
    help: "1 once every wave was written, seen as planned, baked and judged healthy; 0 before, or after a halt.",
    registers,
  });

  const setStatus = (wave: string, status: WaveStatus) => {
    for (const each of WAVE_STATUSES) waveStatus.set({ wave, status: each }, each === status ? 1 : 0);
  };
  for (const event of ROLLOUT_EVENTS) events.inc({ event }, 0);
  for (const [index, wave] of waves.entries()) setStatus(wave, statuses[index] ?? "pending");
  complete.set(0);

  return {
    registry,
    secrets,
    record(event, at) {
      events.inc({ event: event.event });
      lastEvent.set(at.getTime() / 1000);
      switch (event.event) {
        case "rollout_wave_started":
          setStatus(event.wave, "started");
          return;
        case "rollout_wave_passed":
          setStatus(event.wave, "passed");
          failing.set({ wave: event.wave }, event.verdicts.filter((verdict) => !verdict.passed).length);
          return;
        case "rollout_halted":
          setStatus(event.wave, "halted");
          failing.set({ wave: event.wave }, event.failing.length);
          return;
        case "rollout_rolled_back":
          if (event.complete) setStatus(event.wave, "rolled_back");
          return;
        case "rollout_completed":
          complete.set(1);
          return;
        case "rollout_stopped":
          // The wave stands where it stood; the count and the time say that the run stopped.
          return;
      }
    },
  };
}
