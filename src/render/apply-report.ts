// Renders what an apply did: one line per change that is not plainly done (failed, skipped,
// unknown, or done but unchecked), then a one-line summary of what the server now holds.

import type { Writable } from "node:stream";
import type { ApplyOutcome, ApplyReport } from "../apply/types.js";

const paint = (colour: boolean, code: string, text: string) =>
  colour ? `\u001b[${code}m${text}\u001b[0m` : text;

function describe(outcome: ApplyOutcome): string {
  const what = outcome.action === "reorder" ? "reorder" : `${outcome.action} ${JSON.stringify(outcome.name)}`;
  const id = outcome.id === null ? "" : ` (id ${outcome.id})`;
  return `${what}${id} in project ${outcome.project} ${outcome.family} (${outcome.source})`;
}

export function renderApplyReport(report: ApplyReport, out: Writable, options: { colour: boolean }): void {
  const { colour } = options;
  for (const outcome of report.outcomes) {
    if (outcome.status === "failed")
      out.write(`${paint(colour, "31", "✗ failed")}: ${describe(outcome)}: ${outcome.message}\n`);
    if (outcome.status === "skipped")
      out.write(`${paint(colour, "33", "… skipped")}: ${describe(outcome)}: ${outcome.message}\n`);
    if (outcome.status === "unknown")
      out.write(`${paint(colour, "35", "? unknown")}: ${describe(outcome)}: ${outcome.message}\n`);
    if (outcome.status === "done" && outcome.unchecked)
      out.write(`${paint(colour, "33", "! unchecked")}: ${describe(outcome)}: ${outcome.message}\n`);
  }
  const count = (action: ApplyOutcome["action"]) =>
    report.outcomes.filter((outcome) => outcome.action === action && outcome.status === "done").length;
  // Counted in records moved, as the plan counts "to reorder".
  const moved = report.outcomes
    .filter((outcome) => outcome.action === "reorder" && outcome.status === "done")
    .reduce((total, outcome) => total + (outcome.moves ?? 0), 0);
  const done = `${count("create")} created, ${count("update")} updated, ${count("delete")} deleted, ${moved} moved`;
  const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
  const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
  const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
  if (report.interrupted) {
    out.write(
      `${paint(colour, "31", "Apply interrupted")}: ${done}; ${report.failed} failed, ${notStarted} not started, ${report.skipped - notStarted} skipped${unknown}${unchecked}.\n`,
    );
  } else if (report.failed === 0 && report.skipped === 0 && report.unknown === 0 && report.unchecked === 0) {
    out.write(`${paint(colour, "32", "Apply complete")}: ${done}.\n`);
  } else {
    out.write(
      `${paint(colour, "31", "Apply incomplete")}: ${done}; ${report.failed} failed, ${report.skipped} skipped${unknown}${unchecked}.\n`,
    );
  }
  if (report.unknown > 0 || report.unchecked > 0) {
    const what = [
      report.unknown > 0 ? `whether the ${report.unknown} change(s) marked unknown were made` : "",
      report.unchecked > 0 ? `whether the ${report.unchecked} unchecked create(s) have a copy` : "",
    ]
      .filter((part) => part !== "")
      .join(", and ");
    out.write(`Run \`pcsync plan\` to see what the server holds: it shows ${what}.\n`);
  }
}
