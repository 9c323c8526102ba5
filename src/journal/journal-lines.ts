// The journal's lines as types: what schemas/journal.schema.json allows. A file of their own, so
// that the validator (journal-validator.ts) and the reader (journal-format.ts) share them without
// importing each other.

import type { WriteOp, WriteStatus } from "../apply/record-writer.js";
import type { FamilyName, WritableField } from "../families.js";
import type { PluginConfigRecord } from "../wire-types.js";

export const JOURNAL_FORMAT = "pcsync-journal";
export const JOURNAL_VERSION = 1;

/** A record's id and every writable field, as the journal keeps it. */
export type RecordImage = { id: number } & { [F in WritableField]: PluginConfigRecord[F] | null };

export interface JournalHeader {
  type: "header";
  format: typeof JOURNAL_FORMAT;
  version: typeof JOURNAL_VERSION;
  /** `apply`, or `rollback` (then `rollbackOf` names the journal it undoes). */
  command: "apply" | "rollback" | "heal";
  /** The base URL of the service written to, without credentials. */
  server: string;
  startedAt: string;
  projects: string[];
  families: { project: string; family: FamilyName }[];
  /** The plan applied: its fingerprint (sha256 of the saved-plan document), and its file if saved. */
  plan: { fingerprint: string; file: string | null };
  /** The manifest files the plan's changes come from. */
  manifests: string[];
  rollbackOf?: string;
}

export interface IntentEntry {
  type: "intent";
  seq: number;
  op: WriteOp;
  project: string;
  family: FamilyName;
  id: number | null;
  name: string | null;
  send: Record<string, unknown>;
  /** Every record the write touches, as it was just before it was sent; none for a create. */
  before: RecordImage[];
}

export interface OutcomeEntry {
  type: "outcome";
  seq: number;
  status: WriteStatus;
  /** The records as the server answered (a create's new record; a rearrange's moved records). */
  records?: RecordImage[];
  /** By record id: the plugin's own name and description, which some servers show for empty ones. */
  pluginTexts?: Record<string, PluginTexts>;
}

export interface PluginTexts {
  name?: string;
  description?: string;
}

export interface ResumeEntry {
  type: "resume";
  at: string;
}

export interface EndEntry {
  type: "end";
  at: string;
  summary: { done: number; failed: number; skipped: number; unknown: number };
  interrupted: boolean;
}

export type JournalEntry = IntentEntry | OutcomeEntry | ResumeEntry | EndEntry;

/** A line of the journal file, as schemas/journal.schema.json allows it. */
export type JournalLine = JournalHeader | JournalEntry;
