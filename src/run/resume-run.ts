// `apply --plan FILE --resume`: the interrupted apply's journal (--journal, else the newest of this
// plan), held before it is read, and what is left of the plan.

import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import type { ApiClient } from "../api/index.js";
import type { RereadOptions } from "../apply/check-saved-plan.js";
import { checkPlanServer, readStateForPlan } from "../apply/check-saved-plan.js";
import type { RunInput } from "../files/output-target.js";
import { InputError } from "../input-error.js";
import { ApplyJournal, fingerprintPlan } from "../journal/apply-journal.js";
import {
  checkJournalServer,
  DEFAULT_JOURNAL_DIR,
  findJournalOfPlan,
  holdsNoRun,
  type Journal,
  readJournal,
  tornLineNote,
} from "../journal/journal-format.js";
import { JournalLock } from "../journal/journal-lock.js";
import { learnPluginTexts, replayJournal } from "../journal/replay-journal.js";
import { planResume } from "../journal/resume-plan.js";
import { hasChanges } from "../plan/plan-file.js";
import type { CurrentState, Plan } from "../plan/types.js";
import type { SecretRegistry } from "../redact.js";
import { RefusedError, throwSayingNothingChanged } from "../refused-error.js";
import { createShown, isCreate, lateWritesOf, waitForLateWrites } from "./late-writes.js";

export interface ResumeInput {
  saved: Plan;
  planFile: string;
  /** --journal: the interrupted apply's journal; undefined: found by the plan's fingerprint. */
  journal: string | undefined;
  cwd: string;
  reread: RereadOptions;
}

export interface ResumeStart {
  /** Held to the end of the run (the caller releases it). */
  lock: JournalLock | undefined;
  /** What is left of the plan; undefined when it is applied as saved (nothing of it was done). */
  resumed: ResumedPlan | undefined;
}

export interface ResumedPlan {
  journal: Journal;
  plan: Plan;
  current: CurrentState;
  /** Changes and moves the interrupted run had done. */
  done: number;
}

export async function startResume(
  client: ApiClient,
  input: ResumeInput,
  onNote: (line: string) => void,
): Promise<ResumeStart> {
  const { saved, cwd } = input;
  const fingerprint = fingerprintPlan(saved);
  // A journal another run holds is refused (exit 3, naming it); none found is said below.
  const path = input.journal ?? (await findJournalOfPlan(cwd, fingerprint))?.path;
  const lock =
    path === undefined ? undefined : await JournalLock.acquire(path, { cwd, command: "apply --resume" });
  if (lock?.takeOverNote !== undefined) onNote(lock.takeOverNote);
  try {
    // No run (absent, or cut off in its header, which is on disk before the first write): the plan
    // is applied as saved.
    if (input.journal !== undefined && (await holdsNoRun(input.journal, cwd))) {
      await rm(resolve(cwd, input.journal), { force: true });
      onNote(
        `note: ${input.journal} holds no run: the interrupted apply was stopped before its first write, so nothing of the plan was made; it is applied as saved, with every check, and journaled there.`,
      );
      return { lock, resumed: undefined };
    }
    // A plan without changes has nothing to resume: it is applied (checked) as it is.
    if (!hasChanges(saved)) return { lock, resumed: undefined };
    const resumed = await resumeSavedPlan(client, input, path, fingerprint, onNote).catch(
      throwSayingNothingChanged,
    );
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

async function resumeSavedPlan(
  client: ApiClient,
  input: ResumeInput,
  path: string | undefined,
  fingerprint: string,
  onNote: (line: string) => void,
): Promise<ResumedPlan> {
  const { saved, planFile } = input;
  checkPlanServer(saved, planFile, client);
  if (path === undefined)
    throw new InputError("journal_not_found", { planFile, directory: DEFAULT_JOURNAL_DIR });
  const journal = await readJournal(path, input.cwd);
  checkJournalServer(journal, client.base.display);
  if (journal.header.command !== "apply" || journal.header.plan.fingerprint !== fingerprint) {
    throw new RefusedError("journal_plan_mismatch", {
      path: journal.path,
      planFile,
      why: journal.header.command === "apply" ? "another plan" : `it is a ${journal.header.command}'s`,
    });
  }
  let current = await readStateForPlan(saved, client, input.reread);
  // An unanswered create of the killed run may still land, and the resume would make it again: read
  // once those the state does not show cannot land (its updates and deletes write what the resume would).
  const late = lateWritesOf(journal, client, {
    which: (intent) => isCreate(intent) && !createShown(intent, current),
    endLine: false,
  });
  const readAgain = await waitForLateWrites(late, {
    what: "Apply",
    reading: "what is left of the plan",
    dryRun: false,
    onNote,
    signal: client.signal,
  });
  if (readAgain) current = await readStateForPlan(saved, client, input.reread);
  const replay = replayJournal(journal);
  // Some servers show an empty name or description as the plugin's own text: what the run left is
  // recognised only with those texts (a lost answer has none).
  await learnPluginTexts(client, replay, { lists: current, alone: { families: [] } }, input.reread);
  const { reasons, remaining, done } = planResume(saved, replay, current);
  if (reasons.length > 0) throw new RefusedError("stale_plan", { file: planFile, reasons: reasons });
  return { journal, plan: remaining, current, done };
}

/** A resume with nothing left still ends the journal, which no longer reads as cut short; gives its path. */
export async function endResumedJournal(
  resumed: Journal,
  state: CurrentState,
  files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry },
): Promise<string> {
  const journal = await ApplyJournal.resume(resumed, files, state);
  await journal.finish({ done: 0, failed: 0, skipped: 0, unknown: 0, interrupted: false });
  return journal.path;
}
