// A watcher heals for months: its journals would pile up without end. After each heal, the heal
// journals (named `*-heal.jsonl`) beyond the newest `keep` are removed, but only those that ended
// (an interrupted one may still be resumed or rolled back), each under its lock, so that a run
// that holds one (a rollback of it) keeps it.

import { rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { regularFilesIn } from "../files/regular-files.js";
import { readTail } from "./journal-file.js";
import { DEFAULT_JOURNAL_DIR, readJournal } from "./journal-format.js";
import { JournalLock, lockPathOf } from "./journal-lock.js";

const HEAL_JOURNAL_SUFFIX = "-heal.jsonl";

/** How many heal journals a watcher keeps by default (`watch --keep-heal-journals`). */
export const DEFAULT_KEPT_HEAL_JOURNALS = 100;

// The end line is short; a heal journal's last line is read from this much of its tail.
const TAIL_BYTES = 4096;

/** Whether the journal's last line is its `end` line: the run it records finished. */
async function hasEnded(path: string): Promise<boolean> {
  const last = (await readTail(path, TAIL_BYTES)).text.trimEnd().split("\n").pop() ?? "";
  try {
    return (JSON.parse(last) as { type?: unknown }).type === "end";
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * Removes the journal of a heal that changed nothing: ended, and every write it announced answered
 * as failed or never sent, which a rollback passes over (replay-journal.ts). Kept, such journals
 * of a heal that fails every cycle would push the journal of the last heal that did write out of
 * the newest `keep`, and with it the only undo. Returns whether it was removed; a journal that
 * cannot be read, or one that a run holds, stays.
 */
export async function removeIfHealWroteNothing(path: string, cwd: string): Promise<boolean> {
  let lock: JournalLock | undefined;
  try {
    lock = await JournalLock.acquire(path, { cwd, command: "prune heal journals" });
    const journal = await readJournal(path, cwd);
    const changedNothing =
      journal.ended &&
      journal.unanswered.length === 0 &&
      journal.intents.every((intent) => {
        const status = journal.outcomes.get(intent.seq)?.status;
        return status === "failed" || status === "not_sent";
      });
    if (!changedNothing) return false;
    await rm(resolve(cwd, path));
    return true;
  } catch {
    return false;
  } finally {
    await lock?.release().catch(() => undefined);
  }
}

/**
 * Removes the ended, unlocked heal journals in the default journal directory under `cwd` beyond
 * the newest `keep` (0 keeps all); returns the paths removed. A journal that cannot be read or
 * removed is left as it is: pruning never fails a heal.
 */
export async function pruneHealJournals(cwd: string, keep: number): Promise<string[]> {
  if (keep <= 0) return [];
  const directory = resolve(cwd, DEFAULT_JOURNAL_DIR);
  // Names start with the time they were made: sorted, the newest are last.
  const heals = (await regularFilesIn(directory, HEAL_JOURNAL_SUFFIX)).sort();
  const removed: string[] = [];
  for (const name of heals.slice(0, Math.max(0, heals.length - keep))) {
    const path = join(directory, name);
    // Removed under its lock, as a rollback or resume holds it: one that holds it now keeps it.
    let lock: JournalLock | undefined;
    try {
      if (await exists(lockPathOf(path))) continue;
      lock = await JournalLock.acquire(path, { cwd, command: "prune heal journals" });
      if (!(await hasEnded(path))) continue;
      await rm(path);
      removed.push(path);
    } catch {
      // Held, gone already, or not ours to remove: left alone.
    } finally {
      await lock?.release().catch(() => undefined);
    }
  }
  return removed;
}
