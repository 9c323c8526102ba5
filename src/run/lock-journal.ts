// Which journal `apply --plan FILE --resume` finishes, locked before it is read: the one given with
// --journal, else the newest journal of an apply of this plan under the default directory.

import { fingerprintPlan } from "../journal/apply-journal.js";
import { JournalLock } from "../journal/journal-lock.js";
import { findJournalOfPlan } from "../journal/read-journal.js";
import type { Plan } from "../plan/types.js";

/**
 * The lock of the journal to resume; undefined when no journal of the plan is found (the resume
 * then says so, with what to do). A journal another run holds is refused (exit 3, naming it).
 */
export async function lockJournalToResume(
  saved: Plan,
  journal: string | false | undefined,
  io: { cwd: string; onNote: (line: string) => void },
): Promise<JournalLock | undefined> {
  const path =
    typeof journal === "string" ? journal : (await findJournalOfPlan(io.cwd, fingerprintPlan(saved)))?.path;
  if (path === undefined) return undefined;
  const lock = await JournalLock.acquire(path, { cwd: io.cwd, command: "apply --resume" });
  const note = lock.takeOverNote;
  if (note !== undefined) io.onNote(note);
  return lock;
}
