// `apply --plan FILE --resume`: which journal the interrupted apply left, held before it is read
// (the one given with --journal, else the newest of an apply of this plan under the default
// directory), and what is left of the plan; and the end of a resume that finds nothing left.

import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import type { ApiClient } from "../api/index.js";
import type { RereadOptions } from "../apply/check-saved-plan.js";
import type { ApplyReport } from "../apply/types.js";
import type { RunInput } from "../files/output-target.js";
import { ApplyJournal, fingerprintPlan } from "../journal/apply-journal.js";
import { findJournalOfPlan, holdsNoRun, type Journal, tornLineNote } from "../journal/journal-format.js";
import { JournalLock } from "../journal/journal-lock.js";
import { type ResumedPlan, resumeSavedPlan } from "../journal/resume-plan.js";
import type { CurrentState, Plan } from "../plan/types.js";
import type { SecretRegistry } from "../redact.js";
import { throwSayingNothingChanged } from "../refused-error.js";

export interface ResumeInput {
  saved: Plan;
  planFile: string;
  /** --journal: the interrupted apply's journal; undefined: found by the plan's fingerprint. */
  journal: string | undefined;
  cwd: string;
  reread: RereadOptions;
}

export interface ResumeStart {
  /** Held on the resumed journal to the end of the run (the caller releases it). */
  lock: JournalLock | undefined;
  /** What is left of the plan; undefined when it is applied as saved (nothing of it was done). */
  resumed: ResumedPlan | undefined;
}

/**
 * Holds the interrupted apply's journal from before it is read, and works out what is left of the
 * plan. `onNote` is told each line worth saying (a torn line, where the resume starts).
 */
export async function startResume(
  client: ApiClient,
  input: ResumeInput,
  onNote: (line: string) => void,
): Promise<ResumeStart> {
  const lock = await lockJournalToResume(input.saved, input.journal, { cwd: input.cwd, onNote });
  try {
    const given = input.journal;
    // A journal without a run (absent, or cut off in its header): the interrupted apply was killed
    // before its first write, as the header is on disk before that. The plan is applied as saved.
    if (given !== undefined && (await holdsNoRun(given, input.cwd))) {
      await rm(resolve(input.cwd, given), { force: true });
      onNote(
        `note: ${given} holds no run: the interrupted apply was stopped before its first write, so nothing of the plan was made; it is applied as saved, with every check, and journaled there.`,
      );
      return { lock, resumed: undefined };
    }
    // A plan without changes has nothing to resume: it is applied (checked) as it is.
    if (input.saved.changes.length === 0 && input.saved.reorders.length === 0)
      return { lock, resumed: undefined };
    const resumed = await resumeSavedPlan(input.saved, input.planFile, lock?.journal ?? given, client, {
      ...input.reread,
      cwd: input.cwd,
    }).catch(throwSayingNothingChanged);
    const torn = tornLineNote(resumed.journal);
    if (torn !== undefined) onNote(torn);
    onNote(
      `Resuming from ${resumed.journal.path}: the interrupted apply did ${resumed.done} of the plan's changes and moves; the rest follows.`,
    );
    return { lock, resumed };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/**
 * The lock of the journal to resume; undefined when no journal of the plan is found (the resume
 * then says so, with what to do). A journal another run holds is refused (exit 3, naming it).
 */
async function lockJournalToResume(
  saved: Plan,
  journal: string | undefined,
  io: { cwd: string; onNote: (line: string) => void },
): Promise<JournalLock | undefined> {
  const path = journal ?? (await findJournalOfPlan(io.cwd, fingerprintPlan(saved)))?.path;
  if (path === undefined) return undefined;
  const lock = await JournalLock.acquire(path, { cwd: io.cwd, command: "apply --resume" });
  const note = lock.takeOverNote;
  if (note !== undefined) io.onNote(note);
  return lock;
}

/**
 * A resumed apply that finds nothing left to do still ends its journal: the resume and an end line
 * (nothing done) say that the plan was finished, so the journal no longer reads as cut short.
 * Gives the journal's path.
 */
export async function endResumedJournal(
  resumed: Journal,
  state: CurrentState,
  files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry },
): Promise<string> {
  const journal = await ApplyJournal.resume(resumed, files, state);
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
  return journal.path;
}
