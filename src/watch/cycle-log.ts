// What a cycle found and did (CycleReport), and its one line on stdout: words for a person, or with
// --log-format json one JSON object for a log shipper.

import type { FamilyRef } from "../families.js";
import { neutraliseJson, quoteServerText } from "../neutralise-server-text.js";
import type { PlannedChange, PlannedReorder } from "../plan/types.js";
import { plural } from "../plural.js";
import { MARKERS } from "../render/describe-plan.js";
import type { CycleResult } from "./watch-metrics.js";

export interface FamilyFinding extends FamilyRef {
  /** The drift left at the end of the cycle (after heal: what it did not do). */
  changes: PlannedChange[];
  reorder: PlannedReorder | undefined;
  healed?: { changes: PlannedChange[]; reorder: PlannedReorder | undefined; journal?: string };
  /** Heal was refused by these guards: nothing was written to the family. */
  refused?: string[];
  /** Records flapping now, and those that started to this cycle with how long they are left alone. */
  flapping?: { records: number; started: { change: PlannedChange; backoffMs: number }[] };
}

export interface CycleReport {
  result: CycleResult;
  /** Undefined when the cycle ended before it could tell. */
  manifestValid: boolean | undefined;
  problems: string[];
  findings: FamilyFinding[];
  /** Projects read and planned (and healed, in heal mode) without error. */
  succeeded: string[];
  healed: number;
  /** Families heal was refused for. */
  refused: number;
  journal?: string;
  /** The stop came during the cycle: its result is not counted (unless heal wrote). */
  interrupted: boolean;
  /** A bug in pcsync (no user input explains it): /readyz fails until a clean cycle. */
  internalError?: true;
}

/** Counted as the plan's summary counts them. */
export function driftCount(finding: Pick<FamilyFinding, "changes" | "reorder">): number {
  return finding.changes.length + (finding.reorder?.moves.length ?? 0);
}

export function totalsOf(report: CycleReport) {
  const counts = report.findings.map(driftCount);
  return {
    families: counts.length,
    drifting: counts.filter((count) => count > 0).length,
    changes: counts.reduce((sum, count) => sum + count, 0),
  };
}

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface CycleLogEntry {
  cycle: number;
  report: CycleReport;
  durationMs: number;
  at: Date;
}

// How much a text line (SHOWN) and a JSON line (LISTED) name before "and N more".
const PROBLEMS_SHOWN = 3;
const DRIFTING_SHOWN = 5;
const RECORDS_SHOWN = 3;
const RECORDS_LISTED = 20;

function driftOf(report: CycleReport) {
  return report.findings
    .filter((finding) => driftCount(finding) > 0)
    .map((finding) => ({
      project: finding.project,
      family: finding.family,
      changes: driftCount(finding),
      records: finding.changes.map(({ action, name, id }) => ({ action, name, id })),
      moved: finding.reorder?.moves.length ?? 0,
    }));
}

/** `~ "GeoIP" (id 1)`, the name made safe. */
function describeDrifted({ action, name, id }: Pick<PlannedChange, "action" | "name" | "id">) {
  return `${MARKERS[action]} ${name === null ? "(unnamed)" : quoteServerText(name)}${id === null ? "" : ` (id ${id})`}`;
}

/** `drift in project 1 plugin_configs: ~ "GeoIP" (id 1), + "Filter", ↕ 2 records moved`. */
function driftLine(drift: ReturnType<typeof driftOf>[number]): string {
  const named = drift.records.slice(0, RECORDS_SHOWN).map(describeDrifted);
  const more = drift.records.length - named.length;
  const parts = [
    ...named,
    ...(more > 0 ? [`and ${more} more`] : []),
    ...(drift.moved > 0 ? [`${MARKERS.reorder} ${plural(drift.moved, "record")} moved`] : []),
  ];
  return `drift in project ${drift.project} ${drift.family}: ${parts.join(", ")}`;
}

export function formatCycleLine(entry: CycleLogEntry, format: LogFormat): string {
  const { cycle, report, durationMs, at } = entry;
  const totals = totalsOf(report);
  const seconds = Math.round(durationMs) / 1000;
  const drift = driftOf(report);
  if (format === "json") {
    return `${neutraliseJson(
      JSON.stringify({
        time: at.toISOString(),
        level: report.result === "ok" ? "info" : report.result === "guarded" ? "warn" : "error",
        msg: "cycle",
        cycle,
        result: report.result,
        duration_seconds: seconds,
        manifest_valid: report.manifestValid ?? null,
        families: totals.families,
        drifting: totals.drifting,
        changes: totals.changes,
        healed: report.healed,
        refused: report.refused,
        ...(report.journal === undefined ? {} : { journal: report.journal }),
        problems: report.problems,
        refusals: refusalsOf(report).map(({ project, family, guards }) => ({ project, family, guards })),
        drift: drift.map(({ records, ...family }) => ({
          ...family,
          records: records.slice(0, RECORDS_LISTED),
          ...(records.length > RECORDS_LISTED ? { more: records.length - RECORDS_LISTED } : {}),
        })),
      }),
    )}\n`;
  }
  const parts = [
    `${at.toISOString()} cycle ${cycle} ${report.result} in ${seconds.toFixed(2)} s`,
    report.findings.length > 0
      ? `${plural(totals.families, "family", "families")}, ${totals.drifting} drifting (${plural(totals.changes, "change", "changes")})`
      : undefined,
    report.healed > 0
      ? `${report.healed} healed${report.journal === undefined ? "" : ` (journal ${report.journal})`}`
      : report.journal === undefined
        ? undefined
        : `journal ${report.journal}`,
    report.refused > 0 ? `${report.refused} refused by a guard` : undefined,
  ].filter((part) => part !== undefined);
  const said = [
    ...report.problems,
    ...refusalsOf(report).map(
      ({ project, family, guards }) => `refused in project ${project} ${family}: ${guards.join("; ")}`,
    ),
  ];
  const shown = said.slice(0, PROBLEMS_SHOWN).map((problem) => `\n  ${problem}`);
  const more = said.length > PROBLEMS_SHOWN ? `\n  (and ${said.length - PROBLEMS_SHOWN} more)` : "";
  const drifting = drift.slice(0, DRIFTING_SHOWN).map((family) => `\n  ${driftLine(family)}`);
  const moreDrifting =
    drift.length > DRIFTING_SHOWN
      ? `\n  (and ${plural(drift.length - DRIFTING_SHOWN, "more drifting family", "more drifting families")})`
      : "";
  return `${parts.join(": ")}${shown.join("")}${more}${drifting.join("")}${moreDrifting}\n`;
}

function refusalsOf(report: CycleReport) {
  return report.findings.flatMap(({ project, family, refused }) =>
    refused === undefined ? [] : [{ project, family, guards: refused }],
  );
}
