// The journal around a run of apply or rollback: where it goes, and the line that names it at the
// end with the command that undoes the run.

import type { ApiClient } from "../api/index.js";
import type { ApplyReport } from "../apply/types.js";
import type { RunInput } from "../files/output-target.js";
import type { JournalStart } from "../journal/apply-journal.js";
import type { Journal } from "../journal/journal-format.js";
import type { JournalLock } from "../journal/journal-lock.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { applyWithJournal } from "../run/apply-with-journal.js";
import { shellWord } from "../shell-word.js";
import { createApplyProgress } from "./apply-progress.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf, createRuleOf } from "./connection.js";
import type { InterruptWatch } from "./interrupt.js";

export interface JournalFlags {
  /** A path; false with --no-journal. */
  journal?: string | false | undefined;
}

export function journalPathOf(flags: JournalFlags): string | undefined {
  return typeof flags.journal === "string" ? flags.journal : undefined;
}

export function describeJournalNext(
  journalPath: string,
  start: Pick<JournalStart, "command" | "planFile">,
): string {
  const path = shellWord(journalPath);
  const finish =
    start.planFile === null || start.command !== "apply"
      ? ""
      : `  if it was cut short, finish it: pcsync apply --plan ${shellWord(start.planFile)} --resume --journal ${path}\n`;
  return `Journal: ${journalPath}\n  undo this ${start.command}: pcsync rollback --journal ${path}\n${finish}`;
}

/** `resumed`: the journal of the interrupted run this one finishes. */
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
    lock?: JournalLock | undefined;
    /** Records the lists do not show that the journal must know as they are (a rollback's). */
    alsoKnown?: CurrentState | undefined;
    /** The journal may not be one of them. */
    inputs: readonly RunInput[];
    /** For the caller to end its output with the journal's lines; without it, or on a throw, on stderr. */
    endWith?: ((ending: { lines: string; path: string }) => void) | undefined;
  },
): Promise<ApplyReport> {
  const { flags, io, interrupts, inputs, endWith, ...journaled } = run;
  const progress = createApplyProgress(io, plan.changes.length + plan.reorders.length, {
    pausedUntil: () => client.limiter.state.pausedUntil,
  });
  let journal: string | undefined;
  let report: ApplyReport | undefined;
  try {
    const applied = await applyWithJournal(client, plan, state, {
      ...journaled,
      journalPath: flags.journal,
      files: { cwd: io.cwd, inputs, secrets: io.secrets },
      apply: {
        concurrency: concurrencyOf(flags),
        onProgress: (done, total, outcome) => progress.onOutcome(done, total, outcome),
        signal: interrupts.signal,
        create: createRuleOf(flags),
      },
      onNote: (line) => io.stderr.write(`${line}\n`),
      beforeWrites: () => interrupts.beginWrites(),
      onJournal: (path) => {
        journal = path;
      },
    });
    report = applied.report;
    return applied.report;
  } finally {
    progress.finish();
    if (journal !== undefined) {
      const lines = describeJournalNext(journal, run.start);
      if (report !== undefined && endWith !== undefined) endWith({ lines, path: journal });
      else io.stderr.write(lines);
    }
  }
}
