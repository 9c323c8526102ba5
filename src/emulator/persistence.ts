// The data file, made durable by group commit: a snapshot, and a journal (a header naming the
// snapshot, then one line per batch) of the commits since; a write is answered once synced.

import { randomUUID } from "node:crypto";
import { type FileHandle, readdir, readFile, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { appendAll } from "../append-all.js";
import { openForAppend } from "../files/append-file.js";
import { isOutputError } from "../files/file-errors.js";
import { syncDirectory, temporaryFilePrefix, writeFileSafely } from "../files/write-file.js";
import { type ChangeBatch, DataFileError, parseChangeBatch, parseEmulatorData } from "./data-file.js";
import type { EmulatorStore } from "./store.js";
import type { EmulatorData } from "./types.js";

export function journalFileOf(file: string): string {
  return join(dirname(file), `.${basename(file)}.journal`);
}

function readIfExists(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
}

const JOURNAL_FORMAT = 1;

function encodeJournalHeader(snapshotId: string): string {
  return `${JSON.stringify({ journal: JOURNAL_FORMAT, snapshotId })}\n`;
}

/**
 * Returns how many batches were applied. A journal of another snapshot is ignored: a crash right
 * after a compaction leaves one (the snapshot holds its batches), or the file was replaced and wins.
 * A last line without its newline is an append cut short, never acknowledged: skipped.
 */
function replayJournal(
  text: string,
  snapshotId: string | undefined,
  data: EmulatorData,
  name: string,
): number {
  const advice = `remove ${name} to start from the data file alone`;
  // A damaged line is a damaged journal: the data file itself is fine.
  const parseLine = <T>(line: string, lineNumber: number, read: (value: unknown, path: string) => T): T => {
    const losing = `${advice} (losing the writes it holds)`;
    try {
      return read(JSON.parse(line), `${name} line ${lineNumber}`);
    } catch (error) {
      if (error instanceof SyntaxError)
        throw new DataFileError(`${name} line ${lineNumber} is not valid JSON`, losing);
      if (!(error instanceof DataFileError)) throw error;
      throw new DataFileError(error.message, lineNumber === 1 ? advice : losing);
    }
  };
  const lines = text.split("\n");
  // The text after the last newline: empty, or a torn append.
  lines.pop();
  const [header, ...batchLines] = lines;
  if (header === undefined) return 0;
  const headerOf = (value: unknown, path: string) => {
    const { journal, snapshotId } = (value ?? {}) as { journal?: unknown; snapshotId?: unknown };
    if (journal !== JOURNAL_FORMAT)
      throw new DataFileError(`${path} is not a journal header this version understands`);
    return snapshotId;
  };
  const followed = parseLine(header, 1, headerOf);
  if (snapshotId === undefined || followed !== snapshotId) return 0;
  const positions = new Map(data.records.map((record, index) => [record.id, index]));
  for (const [index, line] of batchLines.entries()) {
    const batch: ChangeBatch = parseLine(line, index + 2, parseChangeBatch);
    for (const record of batch.records) {
      const position = positions.get(record.id);
      if (position !== undefined) data.records[position] = record;
      else positions.set(record.id, data.records.push(record) - 1);
    }
    appendAll(data.logEntries, batch.logEntries);
    data.nextIds.record = Math.max(data.nextIds.record, batch.nextRecordId);
  }
  return batchLines.length;
}

interface LoadedDataFile {
  data: EmulatorData;
  /** Absent in hand-made files. */
  snapshotId: string | undefined;
  replayedBatches: number;
}

/** Undefined when the file does not exist. */
export async function loadDataFile(file: string): Promise<LoadedDataFile | undefined> {
  const text = await readIfExists(file);
  if (text === undefined) return undefined;
  let parsed: unknown;
  let data: EmulatorData;
  try {
    parsed = JSON.parse(text);
    data = parseEmulatorData(parsed);
  } catch (error) {
    if (error instanceof SyntaxError) throw new DataFileError(`${file} is not valid JSON (${error.message})`);
    if (error instanceof DataFileError) throw new DataFileError(`${file}: ${error.message}`, error.advice);
    throw error;
  }
  const rawId = (parsed as { snapshotId?: unknown }).snapshotId;
  const snapshotId = typeof rawId === "string" ? rawId : undefined;
  const journalFile = journalFileOf(file);
  const journal = await readIfExists(journalFile);
  const replayedBatches = journal === undefined ? 0 : replayJournal(journal, snapshotId, data, journalFile);
  return { data, snapshotId, replayedBatches };
}

/** Those a killed emulator may have left, of the snapshot and of the journal's header. */
export async function removeStaleTemporaryFiles(file: string): Promise<void> {
  const directory = dirname(file);
  const prefixes = [temporaryFilePrefix(file), temporaryFilePrefix(journalFileOf(file))];
  const names = await readdir(directory).catch((): string[] => []);
  await Promise.all(
    names
      .filter((name) => name.endsWith(".tmp") && prefixes.some((prefix) => name.startsWith(prefix)))
      .map((name) => unlink(join(directory, name)).catch(() => undefined)),
  );
}

/**
 * 0600, fsync, rename, whatever the file's mode was: the files hold keys. The system's own error is
 * passed on: the log line and the 500 name it.
 */
async function writeAtomically(file: string, text: string): Promise<void> {
  try {
    await writeFileSafely(file, text, { cwd: process.cwd() });
  } catch (error) {
    throw isOutputError(error) && error.cause !== undefined ? error.cause : error;
  }
}

type PersistedState = Pick<EmulatorStore, "changeCount" | "takeChanges" | "toJson">;

// Below this, the journal is never folded into the snapshot: tiny states would rewrite constantly.
const MIN_JOURNAL_BYTES = 64 * 1024;

// Writes arriving during a commit share the next one (one line, one sync). A journal grown to the
// snapshot's size is folded into a new snapshot instead, as on a clean stop.
export class DataFileWriter {
  private readonly journalFile: string;
  private journal: FileHandle | undefined;
  private journalBytes = 0;
  private snapshotBytes = 0;
  // After a failed commit the journal's tail is unknown (and a failed fsync may have dropped
  // pages): the next commit writes a whole snapshot instead of appending after it.
  private needsSnapshot = true;
  private snapshotId: string | undefined;
  private durableCount: number;
  private running: { upTo: number; done: Promise<void> } | undefined;
  /** The commit after the running one, which those who came since wait for. */
  private next: Promise<void> | undefined;

  constructor(
    private readonly file: string,
    private readonly state: PersistedState,
  ) {
    this.journalFile = journalFileOf(file);
    this.durableCount = state.changeCount;
  }

  /** Continues the snapshot's journal when the snapshot holds the whole state, else writes a fresh one. */
  async open(loaded: { snapshotId: string | undefined; upToDate: boolean }): Promise<void> {
    if (!loaded.upToDate || loaded.snapshotId === undefined) return this.writeSnapshot();
    await this.startJournal(loaded.snapshotId, (await stat(this.file)).size);
    this.state.takeChanges();
  }

  /** With the running commit when it holds every change so far, else with the next one. */
  whenDurable(): Promise<void> {
    const target = this.state.changeCount;
    if (target <= this.durableCount) return Promise.resolve();
    if (this.running && this.running.upTo >= target) return this.running.done;
    if (this.next) return this.next;
    if (!this.running) return this.startCommit();
    const started = () => this.startCommit();
    this.next = this.running.done.then(started, started);
    return this.next;
  }

  private startCommit(): Promise<void> {
    this.next = undefined;
    const upTo = this.state.changeCount;
    // commit() takes the changes synchronously, before its first await: the batch is exactly the
    // changes made up to now.
    const done = this.commit().then(() => {
      this.durableCount = Math.max(this.durableCount, upTo);
    });
    this.running = { upTo, done };
    const ended = () => {
      if (this.running?.done === done) this.running = undefined;
    };
    done.then(ended, ended);
    return done;
  }

  private commit(): Promise<void> {
    const journal = this.journal;
    const growth = Math.max(this.snapshotBytes, MIN_JOURNAL_BYTES);
    if (this.needsSnapshot || journal === undefined || this.journalBytes > growth) {
      return this.writeSnapshot();
    }
    return this.append(journal, `${JSON.stringify(this.state.takeChanges())}\n`);
  }

  private async append(journal: FileHandle, line: string): Promise<void> {
    try {
      await journal.writeFile(line, "utf8");
      await journal.datasync();
    } catch (error) {
      this.needsSnapshot = true;
      throw error;
    }
    this.journalBytes += Buffer.byteLength(line);
  }

  private async writeSnapshot(): Promise<void> {
    this.needsSnapshot = true;
    // The snapshot holds every change so far; taken synchronously, before the first await.
    this.state.takeChanges();
    const snapshotId = randomUUID();
    const text = this.state.toJson(snapshotId);
    await writeAtomically(this.file, text);
    // From here until the new journal is in place, the old journal follows another snapshot and
    // is ignored on load: the new snapshot already holds all of it.
    await this.startJournal(snapshotId, Buffer.byteLength(text));
  }

  private async startJournal(snapshotId: string, snapshotBytes: number): Promise<void> {
    const header = encodeJournalHeader(snapshotId);
    await writeAtomically(this.journalFile, header);
    await this.journal?.close().catch(() => undefined);
    this.journal = undefined;
    this.journal = await openForAppend(this.journalFile, { cwd: process.cwd() });
    this.snapshotId = snapshotId;
    this.snapshotBytes = snapshotBytes;
    this.journalBytes = Buffer.byteLength(header);
    this.needsSnapshot = false;
  }

  /** Folds the journal into a final snapshot; if that fails, the journal stays for the next start. */
  async close(): Promise<void> {
    const pending = () => this.next ?? this.running?.done;
    for (let commit = pending(); commit !== undefined; commit = pending())
      await commit.catch(() => undefined);
    const headerOnly =
      this.snapshotId !== undefined &&
      this.journalBytes === Buffer.byteLength(encodeJournalHeader(this.snapshotId));
    const folded =
      (!this.needsSnapshot && headerOnly && this.state.changeCount <= this.durableCount) ||
      (await this.writeSnapshot().then(
        () => true,
        () => false,
      ));
    await this.journal?.close().catch(() => undefined);
    this.journal = undefined;
    if (folded) {
      await unlink(this.journalFile).catch(() => undefined);
      await syncDirectory(dirname(this.file));
    }
  }
}
