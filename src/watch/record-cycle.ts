// What a finished cycle leaves behind: the metrics it updates, the events it sends, the line it
// logs, and (for --once) the exit code `plan --detailed-exitcode` would give.

import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED, type ExitCode } from "../errors.js";
import { type FamilyRef, familyKey } from "../families.js";
import type { PcsyncEvent } from "../notify/event.js";
import { type CycleReport, driftCount, totalsOf } from "./cycle-log.js";
import { EventTracker } from "./watch-events.js";
import type { DriftCounts, WatchMetrics } from "./watch-metrics.js";

/**
 * `plan --detailed-exitcode`'s code for what the cycle found: 1 error, 3 refused, 2 drift, 0 in sync.
 * 3 says that a guard refused some family's heal (that family got no write), also where heal wrote
 * to the other families: what is left needs a person, as apply's refusal does; it is not an error.
 */
export function exitCodeOf(report: CycleReport): ExitCode {
  if (report.result === "failed" || report.result === "invalid_manifest") return EXIT_ERROR;
  if (report.result === "guarded") return EXIT_REFUSED;
  return totalsOf(report).changes > 0 ? EXIT_CHANGES : EXIT_OK;
}

/** Keeps the metrics and the event memory across cycles. */
export class CycleRecorder {
  readonly #metrics: WatchMetrics;
  readonly #tracker = new EventTracker();
  /**
   * The families with series of their own: the last cycle's, and those whose drift was shown since
   * as projects were planned; and the projects with a last-success time. Those that leave lose them.
   */
  #families = new Map<string, FamilyRef>();
  #projects = new Set<string>();
  /** The projects the cycle in progress has read and planned so far (showProjectDrift). */
  #plannedThisCycle = new Set<string>();
  #ready = false;
  /** The last cycle to end met an internal error, and no cycle has completed cleanly since. */
  #internalError = false;

  constructor(metrics: WatchMetrics) {
    this.#metrics = metrics;
  }

  /**
   * A cycle has completed with a valid manifest, and none has met an internal error since the
   * last that completed (for /readyz): a watcher that hits a bug in pcsync every cycle is not ready.
   */
  get ready(): boolean {
    return this.#ready && !this.#internalError;
  }

  /** Why /readyz fails, in words. */
  get notReadyReason(): string {
    return this.#internalError
      ? "the last cycle met an internal error (see the log; please report it)"
      : "no cycle has completed with a valid manifest yet";
  }

  /**
   * Shows a project's drift while its cycle is still running (see earlyDriftOf): what a cycle
   * sees is in the metric as soon as it is seen, not once every project is read. These are real
   * observations: a cycle that fails later (another project's read or plan) leaves them as they
   * are, as it leaves the values of the projects it did not get to; and the series is remembered,
   * so the next cycle that completes removes it if its family has left the manifest.
   */
  showProjectDrift(counts: DriftCounts): void {
    for (const [key, { project, family, changes }] of counts) {
      this.#metrics.driftChanges.set({ project, family }, changes);
      this.#families.set(key, { project, family });
      this.#plannedThisCycle.add(project);
    }
  }

  /** Updates the metrics with the cycle, and returns the events it calls for. */
  record(report: CycleReport, durationMs: number, at: Date): PcsyncEvent[] {
    const metrics = this.#metrics;
    const when = at.toISOString();
    const planned = this.#plannedThisCycle;
    this.#plannedThisCycle = new Set();
    metrics.cycles.inc({ result: report.result });
    metrics.cycleDuration.observe(durationMs / 1000);
    if (report.manifestValid !== undefined) metrics.manifestValid.set(report.manifestValid ? 1 : 0);
    if (report.result === "invalid_manifest") return this.#tracker.observeInvalid(report.problems, when);
    if (report.internalError === true) this.#internalError = true;
    else if (report.manifestValid === true) {
      this.#ready = true;
      this.#internalError = false;
    }
    if (report.findings.length === 0 && report.result === "failed") {
      // Another project's read failed: those this cycle read and planned before it did succeed, and
      // their last success is now (else one unreachable project would fire the no-success alert
      // for every project of the manifest).
      for (const project of planned) metrics.lastSuccess.set({ project }, at.getTime() / 1000);
      return this.#tracker.observeFailure(report.problems.join("\n"), when);
    }
    const families = new Map<string, FamilyRef>();
    for (const finding of report.findings) {
      const { project, family } = finding;
      families.set(familyKey(project, family), { project, family });
      metrics.driftChanges.set({ project, family }, driftCount(finding));
      if (finding.healed !== undefined) metrics.heals.inc({ project, family }, driftCount(finding.healed));
      metrics.healFlapping.set({ project, family }, finding.flapping?.records ?? 0);
    }
    for (const project of report.succeeded) metrics.lastSuccess.set({ project }, at.getTime() / 1000);
    // This cycle planned the whole manifest: a family or project it no longer watches loses its
    // series, as a stale last-success time would fire the no-success alert forever, and a stale
    // count would be reported as today's.
    for (const [key, { project, family }] of this.#families) {
      if (families.has(key)) continue;
      for (const metric of [metrics.driftChanges, metrics.heals, metrics.healFlapping])
        metric.remove({ project, family });
    }
    const projects = new Set(report.findings.map((finding) => finding.project));
    for (const project of this.#projects) if (!projects.has(project)) metrics.lastSuccess.remove({ project });
    this.#families = families;
    this.#projects = projects;
    return this.#tracker.observeCycle(
      report.findings,
      when,
      report.result === "failed" ? report.problems.join("\n") : undefined,
    );
  }
}
