// The journal around a run of apply or rollback: its options, where it goes, and the line that
// names it at the end with the command that undoes the run.

import { type Command, Option } from "commander";
import type { ApiClient } from "../api/index.js";
import { applyPlan } from "../apply/apply-plan.js";
import type { ApplyReport } from "../apply/types.js";
import type { RunInput } from "../files/output-target.js";
import { ApplyJournal, defaultJournalPath, type JournalStart } from "../journal/apply-journal.js";
import type { Journal } from "../journal/journal-format.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { createApplyProgress } from "./apply-progress.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf } from "./connection.js";
import type { InterruptWatch } from "./interrupt.js";

export interface JournalFlags {
  /** A path; false with --no-journal. */
  journal?: string | false | undefined;
}

export function addJournalOptions(command: Command, pathHelp: string): Command {
  return command
    .addOption(new Option("--journal <path>", pathHelp))
    .addOption(new Option("--no-journal", "keep no journal (the run cannot be rolled back or resumed)"));
}

/** A path as it can be pasted into a shell. */
export function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * A resumed apply that finds nothing left to do still ends its journal: the resume and an end line
 * (nothing done) say that the plan was finished, so the journal no longer reads as cut short.
 */
export async function endResumedJournal(
  resumed: Journal,
  state: CurrentState,
  run: { io: CliIo; inputs: readonly RunInput[] },
): Promise<void> {
  const journal = await ApplyJournal.resume(
    resumed,
    { cwd: run.io.cwd, inputs: run.inputs, secrets: run.io.secrets },
    state,
  );
  const nothing: ApplyReport = {
    outcomes: [],
    done: 0,
    failed: 0,
    skipped: 0,
    unknown: 0,
    unchecked: 0,
    interrupted: false,
  };
  await journal.finish(nothing);
  run.io.stderr.write(
    `Journal: ${journal.path}\n  undo this apply: pcsync rollback --journal ${shellWord(journal.path)}\n`,
  );
}

/**
 * Applies `plan` with every write journaled (unless --no-journal): a new journal, or `resumed`,
 * the journal of the interrupted run this one finishes. Names the journal on stderr at the end.
 */
export async function applyJournaled(
  client: ApiClient,
  plan: Plan,
  state: CurrentState,
  run: {
    flags: JournalFlags & ConnectionFlags;
    io: CliIo;
    interrupts: InterruptWatch;
    start: Omit<JournalStart, "server" | "plan">;
    resumed?: Journal | undefined;
    /** Records the lists do not show that the journal must know as they are (a rollback's). */
    alsoKnown?: CurrentState | undefined;
    /** The run's input files: the journal may not be one of them. */
    inputs: readonly RunInput[];
  },
): Promise<ApplyReport> {
  const { flags, io, interrupts } = run;
  const known = run.alsoKnown ? { families: [...state.families, ...run.alsoKnown.families] } : state;
  let journal: ApplyJournal | undefined;
  const files = { cwd: io.cwd, inputs: run.inputs, secrets: io.secrets };
  if (run.resumed) journal = await ApplyJournal.resume(run.resumed, files, known);
  else if (flags.journal !== false) {
    const path = flags.journal ?? defaultJournalPath(new Date());
    journal = await ApplyJournal.start(
      path,
      files,
      { ...run.start, server: client.base.display, plan },
      known,
    );
  }
  const progress = createApplyProgress(io, plan.changes.length + plan.reorders.length, {
    pausedUntil: () => client.limiter.state.pausedUntil,
  });
  interrupts.beginWrites();
  let report: ApplyReport | undefined;
  try {
    report = await applyPlan(client, plan, state, {
      concurrency: concurrencyOf(flags),
      onProgress: (done, total, outcome) => progress.onOutcome(done, total, outcome),
      signal: interrupts.signal,
      journal,
    });
  } finally {
    progress.finish();
    if (journal) {
      await journal.finish(report);
      const path = shellWord(journal.path);
      io.stderr.write(
        `Journal: ${journal.path}\n  undo this ${run.start.command}: pcsync rollback --journal ${path}\n` +
          (run.start.planFile === null || run.start.command !== "apply"
            ? ""
            : `  if it was cut short, finish it: pcsync apply --plan ${shellWord(run.start.planFile)} --resume --journal ${path}\n`),
      );
    }
  }
  return report;
}
