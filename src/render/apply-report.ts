// Renders what an apply did: one line per change not plainly done (after a partial apply, the
// changes done first), then a one-line summary of what the server now holds.

import type { ApplyOutcome, ApplyReport } from "../apply/types.js";
import { neutraliseInline, quoteServerText } from "../neutralise-server-text.js";
import { plural } from "../plural.js";
import { createPaint, type Style } from "./colour.js";

function describe(outcome: ApplyOutcome, unnamed = "null"): string {
  const name = outcome.name === null ? unnamed : quoteServerText(outcome.name);
  const what = outcome.action === "reorder" ? "reorder" : `${outcome.action} ${name}`;
  const id = outcome.id === null ? "" : ` (id ${outcome.id})`;
  return `${what}${id} in project ${outcome.project} ${outcome.family} (${outcome.source})`;
}

/** Listed by name where a kind can run to thousands (not started, done with a journal). */
export const NOT_STARTED_LISTED = 20;

export interface TextSink {
  write(text: string): unknown;
}

function listSome<T>(items: readonly T[], line: (item: T) => string, where = ""): string {
  const shown = items.slice(0, NOT_STARTED_LISTED).map((item) => `  ${line(item)}\n`);
  const more = items.length - NOT_STARTED_LISTED;
  return `${shown.join("")}${more > 0 ? `  ... and ${more} more${where}\n` : ""}`;
}

export function renderApplyReport(
  report: ApplyReport,
  out: TextSink,
  options: {
    colour: boolean;
    command?: "apply" | "rollback";
    /** The run's journal path: it lists every change done, so the report lists only some. */
    journal?: string | undefined;
  },
): void {
  const paint = createPaint(options.colour);
  const run = options.command === "rollback" ? "Rollback" : "Apply";
  const again = options.command === "rollback" ? "roll back again" : "apply again";
  // After a partial apply the user must know exactly what already changed (a complete one is the
  // plan). With a journal, which holds each of them, a sample: thousands would bury the summary.
  if (!isApplyComplete(report)) {
    const done = report.outcomes.filter((outcome) => outcome.status === "done");
    const named = (outcome: ApplyOutcome) => describe(outcome, "(unnamed)");
    if (options.journal === undefined || done.length <= NOT_STARTED_LISTED) {
      for (const outcome of done) out.write(`${paint("green", "✓ done")}: ${named(outcome)}\n`);
    } else {
      out.write(`${paint("green", `✓ done (${done.length})`)}:\n`);
      out.write(listSome(done, named, " (the journal lists every one)"));
    }
  }
  for (const outcome of report.outcomes) {
    const flag = (style: Style, label: string) =>
      out.write(`${paint(style, label)}: ${describe(outcome)}: ${neutraliseInline(outcome.message ?? "")}\n`);
    if (outcome.status === "failed") flag("red", "✗ failed");
    if (outcome.status === "skipped" && outcome.notStarted !== true) flag("yellow", "… skipped");
    if (outcome.status === "unknown") flag("magenta", "? unknown");
    if (outcome.status === "done" && outcome.unchecked && outcome.checkInterrupted !== true)
      flag("yellow", "! unchecked");
    if (outcome.status === "done" && outcome.copiesRemoved !== undefined)
      flag("yellow", "! duplicates removed");
  }
  const count = (action: ApplyOutcome["action"]) =>
    report.outcomes.filter((outcome) => outcome.action === action && outcome.status === "done").length;
  // Counted in records moved, as the plan counts "to reorder".
  const moved = report.outcomes
    .filter((outcome) => outcome.action === "reorder" && outcome.status === "done")
    .reduce((total, outcome) => total + (outcome.moves ?? 0), 0);
  // Copies deleted by the check after creates are not deletes of the plan, but they are writes.
  const copies = report.outcomes.reduce((total, outcome) => total + (outcome.copiesRemoved?.length ?? 0), 0);
  const removed = copies === 0 ? "" : `, ${plural(copies, "duplicate copy", "duplicate copies")} removed`;
  const done = `${count("create")} created, ${count("update")} updated, ${count("delete")} deleted, ${moved} reordered${removed}`;
  const notStartedOutcomes = report.outcomes.filter((outcome) => outcome.notStarted === true);
  const notStarted = notStartedOutcomes.length;
  // Counted, with a sample of names: thousands of lines after a Ctrl-C would bury the summary.
  const uncheckedByInterrupt = report.outcomes.filter(
    (outcome) => outcome.status === "done" && outcome.unchecked && outcome.checkInterrupted === true,
  );
  if (uncheckedByInterrupt.length > 0) {
    // They are among the changes done, listed above: a count says the rest.
    const count = uncheckedByInterrupt.length;
    out.write(
      `${paint("yellow", `! unchecked (${count})`)}: the run was interrupted before the check for a copy of ${count === 1 ? "the create" : `${count} of the creates`} done (a concurrent run's, or a late commit of a POST whose answer was lost)\n`,
    );
  }
  if (notStarted > 0) {
    out.write(
      `${paint("yellow", `Not started (${notStarted})`)}: the run was interrupted before ${notStarted === 1 ? "this change" : "these changes"}; ${again} to make ${notStarted === 1 ? "it" : "them"}:\n`,
    );
    out.write(listSome(notStartedOutcomes, (outcome) => describe(outcome)));
  }
  const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
  const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
  if (report.interrupted) {
    out.write(
      `${paint("red", `${run} interrupted`)}: ${done}; ${report.failed} failed, ${notStarted} not started, ${report.skipped - notStarted} skipped${unknown}${unchecked}.\n`,
    );
  } else if (isApplyComplete(report)) {
    out.write(`${paint("green", `${run} complete`)}: ${done}.\n`);
  } else {
    out.write(
      `${paint("red", `${run} incomplete`)}: ${done}; ${report.failed} failed, ${report.skipped} skipped${unknown}${unchecked}.\n`,
    );
  }
  if (report.unknown > 0 || report.unchecked > 0) {
    const what: string[] = [];
    if (report.unknown === 1) what.push("whether the change marked unknown was made");
    if (report.unknown > 1) what.push(`whether the ${report.unknown} changes marked unknown were made`);
    if (report.unchecked === 1) what.push("whether the unchecked create has a copy");
    if (report.unchecked > 1) what.push(`whether the ${report.unchecked} unchecked creates have a copy`);
    out.write(`Run \`pcsync plan\` to see what the server holds: it shows ${what.join(", and ")}.\n`);
  }
  if (report.mayLandUntil !== undefined)
    out.write(
      `${paint("yellow", "Note")}: an update or delete went unanswered and was sent again; the service may still apply the first until ${report.mayLandUntil.toISOString()} (2.5 x --timeout after pcsync gave up on it), over anything written to that record before then (a rollback of this run's journal waits for it; an edit by hand should too).\n`,
    );
}

export function isApplyComplete(report: ApplyReport): boolean {
  return (
    !report.interrupted &&
    report.failed === 0 &&
    report.skipped === 0 &&
    report.unknown === 0 &&
    report.unchecked === 0
  );
}
