// The data file's journal: a header line naming the snapshot (data file) it follows, then one line
// of JSON per committed batch of changes. Appending a line and syncing it is what makes a batch
// durable; the loader replays the lines onto the snapshot.

import { appendAll } from "../append-all.js";
import { type ChangeBatch, DataFileError, parseChangeBatch } from "./data-file.js";
import type { EmulatorData } from "./types.js";

const JOURNAL_FORMAT = 1;

export function encodeJournalHeader(snapshotId: string): string {
  return `${JSON.stringify({ journal: JOURNAL_FORMAT, snapshotId })}\n`;
}

export function encodeBatch(batch: ChangeBatch): string {
  return `${JSON.stringify(batch)}\n`;
}

function dropJournalAdvice(name: string): string {
  return `remove ${name} to start from the data file alone (losing the writes it holds)`;
}

function parseLine(line: string, name: string, lineNumber: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new DataFileError(`${name} line ${lineNumber} is not valid JSON`, dropJournalAdvice(name));
  }
}

function applyBatch(data: EmulatorData, batch: ChangeBatch, positions: Map<number, number>): void {
  for (const record of batch.records) {
    const position = positions.get(record.id);
    if (position === undefined) {
      positions.set(record.id, data.records.length);
      data.records.push(record);
    } else data.records[position] = record;
  }
  appendAll(data.logEntries, batch.logEntries);
  data.nextIds.record = Math.max(data.nextIds.record, batch.nextRecordId);
}

/**
 * Applies the journal's batches, in order, to `data` when the journal follows the snapshot
 * `snapshotId`. A journal that follows another snapshot is left unapplied: it is what a crash
 * right after a compaction leaves (the snapshot already holds its batches), or the data file was
 * replaced, and the file wins. A last line without its newline is a batch whose append was cut
 * short; it was never acknowledged, so it is skipped. Returns how many batches were applied.
 */
export function replayJournal(
  text: string,
  snapshotId: string | undefined,
  data: EmulatorData,
  name: string,
): number {
  const lines = text.split("\n");
  // The text after the last newline: empty, or a torn append.
  lines.pop();
  const [header, ...batchLines] = lines;
  if (header === undefined) return 0;
  const parsedHeader = parseLine(header, name, 1) as { journal?: unknown; snapshotId?: unknown };
  if (parsedHeader.journal !== JOURNAL_FORMAT) {
    throw new DataFileError(
      `${name} line 1 is not a journal header this version understands`,
      `remove ${name} to start from the data file alone`,
    );
  }
  if (snapshotId === undefined || parsedHeader.snapshotId !== snapshotId) return 0;
  const positions = new Map<number, number>();
  for (const [index, record] of data.records.entries()) positions.set(record.id, index);
  for (const [index, line] of batchLines.entries()) {
    const lineNumber = index + 2;
    const value = parseLine(line, name, lineNumber);
    let batch: ChangeBatch;
    try {
      batch = parseChangeBatch(value, `${name} line ${lineNumber}`);
    } catch (error) {
      // A batch of the wrong shape is a damaged journal: the data file itself is fine.
      if (!(error instanceof DataFileError)) throw error;
      throw new DataFileError(error.message, dropJournalAdvice(name));
    }
    applyBatch(data, batch, positions);
  }
  return batchLines.length;
}
