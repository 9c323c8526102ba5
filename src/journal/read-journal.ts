// Reading a journal from disk, checking that it belongs to the server and plan at hand, and
// finding the journal of a saved plan whose apply was interrupted.

import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { InputError } from "../input-error.js";
import { RefusedError } from "../refused-error.js";
import { DEFAULT_JOURNAL_DIR } from "./apply-journal.js";
import { type Journal, parseJournal } from "./journal-format.js";

/** Reads and checks a journal; `path` is relative to `cwd` and named as given in messages. */
export async function readJournal(path: string, cwd: string): Promise<Journal> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputError("journal_unreadable", {
      path,
      reason: code === "ENOENT" ? "no such file" : (error as Error).message,
      directory: DEFAULT_JOURNAL_DIR,
    });
  }
  return parseJournal(text, path);
}

/** Throws as readJournal does when there is no journal at `path`: before a lock is made beside it. */
export async function checkJournalExists(path: string, cwd: string): Promise<void> {
  const there = await stat(resolve(cwd, path)).then(
    () => true,
    () => false,
  );
  if (!there) await readJournal(path, cwd);
}

/**
 * Whether the file at `path` is a journal whose run wrote nothing: absent, or without a complete
 * header line (killed while creating it). A run's header is on disk before its first write, so
 * such a run made no change.
 */
export async function holdsNoRun(path: string, cwd: string): Promise<boolean> {
  try {
    const { size, isFile } = await stat(resolve(cwd, path)).then((info) => ({
      size: info.size,
      isFile: info.isFile(),
    }));
    if (!isFile) return false;
    if (size === 0) return true;
    if (size > 65_536) return false;
    return !(await readFile(resolve(cwd, path), "utf8")).includes("\n");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

export function checkJournalServer(journal: Journal, server: string): void {
  if (journal.header.server !== server)
    throw new RefusedError("journal_server_mismatch", {
      path: journal.path,
      journalServer: journal.header.server,
      server: server,
    });
}

/** The note a journal with a line cut off by a kill gets: it reads, without that line. */
export function tornLineNote(journal: Journal): string | undefined {
  if (journal.tornLines.length === 0) return undefined;
  const lines = journal.tornLines.join(", ");
  return `note: ${journal.path}: line ${lines} was cut off (the run was killed while writing it) and is ignored; the journal reads without it`;
}

/**
 * The newest journal under the default directory of an apply of the plan with this fingerprint:
 * what `apply --plan FILE --resume` finishes when no --journal is given.
 */
export async function findJournalOfPlan(cwd: string, fingerprint: string): Promise<Journal | undefined> {
  let names: string[];
  try {
    names = await readdir(resolve(cwd, DEFAULT_JOURNAL_DIR));
  } catch {
    return undefined;
  }
  // The names are UTC timestamps: newest last.
  for (const name of names
    .filter((entry) => entry.endsWith(".jsonl"))
    .sort()
    .reverse()) {
    let journal: Journal;
    try {
      journal = await readJournal(join(DEFAULT_JOURNAL_DIR, name), cwd);
    } catch {
      continue;
    }
    if (journal.header.command === "apply" && journal.header.plan.fingerprint === fingerprint) return journal;
  }
  return undefined;
}
