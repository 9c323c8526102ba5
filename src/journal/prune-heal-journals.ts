// A watcher's heal journals (`*-heal.jsonl`) beyond the newest `keep` are removed, only ended ones (an
// interrupted one may still be resumed or rolled back), each under its lock so a run holding it keeps it.

import { rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { regularFilesIn } from "../files/regular-files.js";
import { groupBy } from "../group-by.js";
import type { FieldValue } from "../plan/types.js";
import { readTail } from "./journal-file.js";
import { DEFAULT_JOURNAL_DIR, readJournal } from "./journal-format.js";
import { JournalLock, lockPathOf } from "./journal-lock.js";
import { type Replay, replayJournal } from "./replay-journal.js";

const HEAL_JOURNAL_SUFFIX = "-heal.jsonl";

/** `watch --keep-heal-journals`. */
export const DEFAULT_KEPT_HEAL_JOURNALS = 100;

// The end line is short; a heal journal's last line is read from this much of its tail.
const TAIL_BYTES = 4096;

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
 * Whether the run left every record as it found it (its rollback would do nothing): each record it
 * made it deleted again (a create the service misplaced, taken back), each one it changed holds its
 * old values. A lost create may have made a record: not nothing.
 */
function leavesNothing({ records, lostCreates }: Replay): boolean {
  if (lostCreates.length > 0) return false;
  const only = (values: readonly FieldValue[] | undefined, value: unknown) =>
    values?.length === 1 && JSON.stringify(values[0] ?? null) === JSON.stringify(value ?? null);
  // By id: a record made through one family's endpoint and deleted through another's (the list
  // that shows it) is one record, touched under two families.
  for (const touched of groupBy([...records.values()], (record) => record.id).values()) {
    if (touched.every((record) => record.before === null)) {
      if (!touched.some((record) => only(record.after.get("deleted"), true))) return false;
      continue;
    }
    for (const { before, after } of touched) {
      if (before === null) return false;
      for (const [field, values] of after) if (!only(values, before[field])) return false;
    }
  }
  return true;
}

/**
 * Removes an ended heal journal that changed nothing, no write left unanswered. Kept, those of a heal
 * failing every cycle would push the last heal that wrote, and its only undo, out of the newest `keep`.
 */
export async function removeIfHealWroteNothing(path: string, cwd: string): Promise<boolean> {
  let lock: JournalLock | undefined;
  try {
    lock = await JournalLock.acquire(path, { cwd, command: "prune heal journals" });
    const journal = await readJournal(path, cwd);
    if (!journal.ended || journal.unanswered.length > 0 || !leavesNothing(replayJournal(journal)))
      return false;
    await rm(resolve(cwd, path));
    return true;
  } catch {
    return false;
  } finally {
    await lock?.release().catch(() => undefined);
  }
}

/** `keep` 0 keeps all. A journal that cannot be read or removed stays: pruning never fails a heal. */
export async function pruneHealJournals(cwd: string, keep: number): Promise<string[]> {
  if (keep <= 0) return [];
  const directory = resolve(cwd, DEFAULT_JOURNAL_DIR);
  // Names start with the time they were made: sorted, the newest are last.
  const heals = (await regularFilesIn(directory, HEAL_JOURNAL_SUFFIX)).sort();
  const removed: string[] = [];
  for (const name of heals.slice(0, Math.max(0, heals.length - keep))) {
    const path = join(directory, name);
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
