// What a finished cycle leaves behind: the metrics it updates, the events it sends, the line it
// logs, and (for --once) the exit code `plan --detailed-exitcode` would give.

import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK, EXIT_REFUSED, type ExitCode } from "../errors.js";
import { type FamilyRef, familyKey } from "../families.js";
import type { PcsyncEvent } from "../notify/event.js";
import { type CycleReport, driftCount, totalsOf } from "./cycle-log.js";
import { EventTracker } from "./watch-events.js";
import type { DriftCounts, WatchMetrics } from "./watch-metrics.js";

/**
 * `plan --detailed-exitcode`'s codes. 3 even where heal wrote to other families: a refused family needs
 * a person, as apply's refusal does; it is not an error.
 */
export function exitCodeOf(report: CycleReport): ExitCode {
  if (report.result === "failed" || report.result === "invalid_manifest") return EXIT_ERROR;
  if (report.result === "guarded") return EXIT_REFUSED;
  return totalsOf(report).changes > 0 ? EXIT_CHANGES : EXIT_OK;
}

export class CycleRecorder {
  readonly #metrics: WatchMetrics;
  readonly #tracker = new EventTracker();
  /** The families and projects with series of their own: those that leave the manifest lose them. */
  #families = new Map<string, FamilyRef>();
  #projects = new Set<string>();
  #plannedThisCycle = new Set<string>();
  #ready = false;
  #internalError = false;

  constructor(metrics: WatchMetrics) {
    this.#metrics = metrics;
  }

  /** A watcher that hits a bug in pcsync every cycle is not ready. */
  get ready(): boolean {
    return this.#ready && !this.#internalError;
  }

  get notReadyReason(): string {
    return this.#internalError
      ? "the last cycle met an internal error (see the log; please report it)"
      : "no cycle has completed with a valid manifest yet";
  }

  /**
   * A project's drift while its cycle still runs (earlyDriftOf). Real observations: a cycle failing
   * later leaves them, and the next complete cycle removes a series whose family left the manifest.
   */
  showProjectDrift(counts: DriftCounts): void {
    for (const [key, { project, family, changes }] of counts) {
      this.#metrics.driftChanges.set({ project, family }, changes);
      this.#families.set(key, { project, family });
      this.#plannedThisCycle.add(project);
    }
  }

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
      // The projects planned before another's read failed did succeed: else one unreachable project
      // would fire the no-success alert for every project.
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
    // A family or project no longer watched loses its series: a stale last-success time would fire
    // the no-success alert forever.
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
