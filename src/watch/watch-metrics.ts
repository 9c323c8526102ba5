// The metrics `pcsync watch` exposes, by the names the CLI contract fixes, made with prom-client:
// what drifts now, how cycles end, what heal changed, and the requests made to the service.

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { FamilyRef } from "../families.js";
import { SecretRegistry } from "../redact.js";

export const CYCLE_RESULTS = ["ok", "failed", "guarded", "invalid_manifest"] as const;
export type CycleResult = (typeof CYCLE_RESULTS)[number];

// From a fast emulator (tens of ms) to a fleet at a slow service (minutes).
const CYCLE_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

const LINT_FAILING_DEFAULTS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

export type WatchMetrics = ReturnType<typeof createWatchMetrics>;

export function createWatchMetrics(
  options: { processMetrics: boolean; secrets?: SecretRegistry } = { processMetrics: true },
) {
  const registry = new Registry();
  const processRegistry = new Registry();
  // node_exporter exports its own process_* metrics: a textfile with them would collide, so the
  // process metrics live in a registry of their own that only `/metrics` adds.
  if (options.processMetrics) {
    collectDefaultMetrics({ register: processRegistry });
    // Gauges named like counters, which `promtool check metrics` rejects; the same counts stay in
    // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources (by type).
    for (const name of LINT_FAILING_DEFAULTS) processRegistry.removeSingleMetric(name);
  }
  const registers = [registry];
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  const metrics = {
    /** Label values come from manifests and the service, so the text is redacted. */
    secrets: options.secrets ?? new SecretRegistry(),
    registry,
    processRegistry,
    driftChanges: gauge(
      "pcsync_drift_changes",
      "Changes a plan would make now in this project and family (0: in sync).",
      ["project", "family"],
    ),
    lastSuccess: gauge(
      "pcsync_last_success_timestamp_seconds",
      "When a cycle last read and planned this project without error (Unix time).",
      ["project"],
    ),
    cycles: counter(
      "pcsync_cycles_total",
      "Cycles completed, by result: ok, failed, guarded (a guard refused a family: another owner's record, a protected one, a limit; nothing is healed there), invalid_manifest.",
      ["result"],
    ),
    cycleDuration: new Histogram({
      name: "pcsync_cycle_duration_seconds",
      help: "How long a cycle took: reading the manifest, reading the service, planning and healing.",
      buckets: CYCLE_DURATION_BUCKETS,
      registers,
    }),
    heals: counter("pcsync_heals_total", "Changes applied by heal mode, by project and family.", [
      "project",
      "family",
    ]),
    healFlapping: gauge(
      "pcsync_heal_flapping",
      "Records heal leaves alone for now, as something else keeps changing them back (healed in 3 cycles in a row).",
      ["project", "family"],
    ),
    manifestValid: gauge(
      "pcsync_manifest_valid",
      "1 when the manifest last read passed validation, 0 when it did not.",
    ),
    requests: counter(
      "pcsync_requests_total",
      "Requests sent to the service (retries included), by method and status; status error: no response.",
      ["method", "status"],
    ),
    /** When the last request attempt ended (monotonic): a long cycle still getting answers is alive. */
    progress: { lastAttemptAt: undefined as number | undefined },
  };
  // Every result shows from the start, at 0: rate() and increase() then see the first one.
  for (const result of CYCLE_RESULTS) metrics.cycles.inc({ result }, 0);
  return metrics;
}

/** By family key. */
export type DriftCounts = ReadonlyMap<string, FamilyRef & { changes: number }>;

export async function renderMetrics(metrics: WatchMetrics): Promise<string> {
  const text = `${await metrics.registry.metrics()}${await metrics.processRegistry.metrics()}`;
  return metrics.secrets.redact(text).text;
}
