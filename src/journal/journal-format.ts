// The journal's lines, as types, and the reader that checks them: a journal is input (it may have
// been copied, cut or edited by hand), so every line is validated and a bad one is refused with
// its line number; only a last line cut off by a kill is tolerated, and said.

import type { WriteOp, WriteStatus } from "../apply/journaled-writes.js";
import { type FamilyName, isFamilyName, WRITABLE_FIELDS, type WritableField } from "../families.js";
import { InputError } from "../input-error.js";
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

export interface Journal {
  path: string;
  header: JournalHeader;
  intents: IntentEntry[];
  /** The last outcome of each intent, by seq. */
  outcomes: Map<number, OutcomeEntry>;
  /** How many times the apply was resumed. */
  resumes: number;
  ended: boolean;
  /** 1-based numbers of lines cut off by a kill (the last one, or one a resume followed). */
  tornLines: number[];
  /** The line of each intent, by seq: where a rollback's change comes from. */
  intentLines: Map<number, number>;
}

export function imageOf(record: PluginConfigRecord): RecordImage {
  const image = { id: record.id } as RecordImage;
  for (const field of WRITABLE_FIELDS) (image as Record<string, unknown>)[field] = record[field] ?? null;
  return image;
}

const OPS: readonly WriteOp[] = ["create", "update", "delete", "order", "rearrange", "copy"];
const STATUSES: readonly WriteStatus[] = ["done", "failed", "unknown", "not_sent"];

type Check = (ok: boolean, what: string) => void;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

function checkImage(value: unknown, check: Check, where: string): void {
  check(isObject(value), `${where} is not a record`);
  const image = value as Record<string, unknown>;
  check(isId(image.id), `${where}.id is not a record id`);
  check(isId(image.plugin), `${where}.plugin is not a plugin id`);
  check(typeof image.enabled === "boolean", `${where}.enabled is not true or false`);
  check(typeof image.deleted === "boolean", `${where}.deleted is not true or false`);
  check(
    typeof image.order === "number" && Number.isSafeInteger(image.order),
    `${where}.order is not an integer`,
  );
  for (const field of ["name", "description"])
    check(image[field] === null || typeof image[field] === "string", `${where}.${field} is not text or null`);
  check(
    image.match_action === null || isId(image.match_action),
    `${where}.match_action is not an id or null`,
  );
}

function checkHeader(value: Record<string, unknown>, check: Check): JournalHeader {
  check(value.type === "header", "the first line is not a journal header");
  check(value.format === JOURNAL_FORMAT, `this is not a pcsync journal (format is not "${JOURNAL_FORMAT}")`);
  check(
    value.version === JOURNAL_VERSION,
    `journal version ${String(value.version)} is not known to this pcsync`,
  );
  check(
    value.command === "apply" || value.command === "rollback" || value.command === "heal",
    "command is not apply, rollback or heal",
  );
  check(typeof value.server === "string" && value.server !== "", "server is missing");
  check(typeof value.startedAt === "string", "startedAt is missing");
  check(
    Array.isArray(value.projects) && value.projects.every((p) => typeof p === "string"),
    "projects is not a list of ids",
  );
  check(
    Array.isArray(value.families) &&
      value.families.every(
        (f) =>
          isObject(f) &&
          typeof f.project === "string" &&
          typeof f.family === "string" &&
          isFamilyName(f.family),
      ),
    "families is not a list of project families",
  );
  const plan = value.plan;
  check(
    isObject(plan) &&
      typeof plan.fingerprint === "string" &&
      (plan.file === null || typeof plan.file === "string"),
    "plan is not {fingerprint, file}",
  );
  check(
    Array.isArray(value.manifests) && value.manifests.every((m) => typeof m === "string"),
    "manifests is not a list of files",
  );
  check(value.rollbackOf === undefined || typeof value.rollbackOf === "string", "rollbackOf is not a path");
  return value as unknown as JournalHeader;
}

function checkEntry(value: Record<string, unknown>, check: Check): JournalEntry {
  switch (value.type) {
    case "intent": {
      check(isId(value.seq), "seq is not a positive integer");
      check(OPS.includes(value.op as WriteOp), `op is not one of ${OPS.join(", ")}`);
      check(typeof value.project === "string" && value.project !== "", "project is missing");
      check(typeof value.family === "string" && isFamilyName(value.family), "family is not a family name");
      check(value.id === null || isId(value.id), "id is not a record id or null");
      check(value.name === null || typeof value.name === "string", "name is not text or null");
      check(isObject(value.send), "send is not an object");
      check(Array.isArray(value.before), "before is not a list");
      for (const [index, image] of (value.before as unknown[]).entries())
        checkImage(image, check, `before[${index}]`);
      if (value.op === "create")
        check(
          value.id === null && (value.before as unknown[]).length === 0,
          "a create carries an id or a before image",
        );
      else if (value.op !== "rearrange")
        check(value.id !== null, `an ${String(value.op)} without a record id`);
      return value as unknown as IntentEntry;
    }
    case "outcome": {
      check(isId(value.seq), "seq is not a positive integer");
      check(STATUSES.includes(value.status as WriteStatus), `status is not one of ${STATUSES.join(", ")}`);
      if (value.records !== undefined) {
        check(Array.isArray(value.records), "records is not a list");
        for (const [index, image] of (value.records as unknown[]).entries())
          checkImage(image, check, `records[${index}]`);
      }
      if (value.pluginTexts !== undefined) {
        check(isObject(value.pluginTexts), "pluginTexts is not an object");
        for (const texts of Object.values(value.pluginTexts as Record<string, unknown>))
          check(
            isObject(texts) &&
              Object.entries(texts).every(
                ([key, text]) => (key === "name" || key === "description") && typeof text === "string",
              ),
            "pluginTexts holds something other than a name and a description",
          );
      }
      return value as unknown as OutcomeEntry;
    }
    case "resume":
      check(typeof value.at === "string", "at is missing");
      return value as unknown as ResumeEntry;
    case "end":
      check(typeof value.at === "string", "at is missing");
      check(isObject(value.summary), "summary is missing");
      return value as unknown as EndEntry;
    default:
      check(false, `unknown line type ${JSON.stringify(value.type)}`);
      throw new Error("unreachable");
  }
}

/** Parses and checks a journal's text (`path` names it in errors). */
export function parseJournal(text: string, path: string): Journal {
  const lines = text.split("\n");
  // A complete journal ends in "\n": the last piece is then empty; anything else was cut off.
  const cutOff = lines.pop() ?? "";
  const tornLines: number[] = [];
  if (cutOff !== "") tornLines.push(lines.length + 1);
  if (lines.length === 0)
    throw new InputError("journal_invalid", {
      path: path,
      line: 1,
      reason: "the journal is empty (no header line)",
    });
  const parsed: (Record<string, unknown> | undefined)[] = lines.map((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return isObject(value) ? value : undefined;
    } catch {
      return undefined;
    }
  });
  let header: JournalHeader | undefined;
  const journal: Omit<Journal, "header"> = {
    path,
    intents: [],
    outcomes: new Map(),
    resumes: 0,
    ended: false,
    tornLines,
    intentLines: new Map(),
  };
  const intentSeqs = new Set<number>();
  for (const [index, value] of parsed.entries()) {
    const lineNo = index + 1;
    const check: Check = (ok, what) => {
      if (!ok) throw new InputError("journal_invalid", { path: path, line: lineNo, reason: what });
    };
    if (value === undefined) {
      // A line cut off by a kill, which a resumed run then wrote past: tolerated.
      const next = parsed[index + 1];
      check(header !== undefined && next?.type === "resume", "not a JSON object");
      tornLines.push(lineNo);
      continue;
    }
    if (header === undefined) {
      header = checkHeader(value, check);
      continue;
    }
    const entry = checkEntry(value, check);
    if (entry.type === "intent") {
      check(!intentSeqs.has(entry.seq), `seq ${entry.seq} is used twice`);
      intentSeqs.add(entry.seq);
      journal.intents.push(entry);
      journal.intentLines.set(entry.seq, lineNo);
    } else if (entry.type === "outcome") {
      check(intentSeqs.has(entry.seq), `an outcome for seq ${entry.seq}, which no intent before it has`);
      journal.outcomes.set(entry.seq, entry);
    } else if (entry.type === "resume") {
      journal.resumes += 1;
      journal.ended = false;
    } else {
      journal.ended = true;
    }
  }
  if (header === undefined)
    throw new InputError("journal_invalid", { path: path, line: 1, reason: "no header line" });
  tornLines.sort((a, b) => a - b);
  return { ...journal, header };
}
