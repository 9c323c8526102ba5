// The journal's line types and their reader: a journal is input (copied, cut, hand-edited), so every
// line is validated and a bad one refused by line number; only a line cut off by a kill is tolerated.

import { stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { WriteIntent, WriteOp, WriteStatus } from "../apply/record-writer.js";
import { type FamilyName, WRITABLE_FIELDS, type WritableField } from "../families.js";
import { JSON_FILE_AJV_OPTIONS, readJsonFileSchema } from "../files/json-file-schemas.js";
import { refuseOtherKind } from "../files/pcsync-file-kind.js";
import { describeSchemaErrors, formatJsonPath, readBoundedText } from "../files/read-json-file.js";
import { regularFilesIn } from "../files/regular-files.js";
import { formatBytes } from "../format-bytes.js";
import { InputError } from "../input-error.js";
import { asRecord } from "../plain-object.js";
import { precompiledValidator } from "../precompiled.js";
import { RefusedError } from "../refused-error.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { readTail } from "./journal-file.js";

export const DEFAULT_JOURNAL_DIR = join(".pcsync", "journal");

export const JOURNAL_FORMAT = "pcsync-journal";
export const JOURNAL_VERSION = 1;

export type RecordImage = { id: number } & { [F in WritableField]: PluginConfigRecord[F] | null };

export interface JournalHeader {
  type: "header";
  format: typeof JOURNAL_FORMAT;
  version: typeof JOURNAL_VERSION;
  /** A `rollback` names the journal it undoes in `rollbackOf`. */
  command: "apply" | "rollback" | "heal";
  /** Without credentials. */
  server: string;
  startedAt: string;
  projects: string[];
  families: { project: string; family: FamilyName }[];
  /** The fingerprint is the sha256 of the saved-plan document. */
  plan: { fingerprint: string; file: string | null };
  manifests: string[];
  rollbackOf?: string;
  /** The manifest's `owner:` (a rollback: the owner of the run it undoes); absent without one. */
  owner?: string;
}

/** `before`: every record the write touches as it was just before it was sent (none for a create). */
export type IntentEntry = WriteIntent & { type: "intent"; seq: number; before: RecordImage[] };

export interface OutcomeEntry {
  type: "outcome";
  seq: number;
  status: WriteStatus;
  /** As the server answered (a create's new record; a rearrange's moved records). */
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
  /** An update or delete of the run went unanswered and was sent again: the first may land until then. */
  mayLandUntil?: string;
}

export type JournalEntry = IntentEntry | OutcomeEntry | ResumeEntry | EndEntry;

export type JournalLine = JournalHeader | JournalEntry;

/** The records a write touches, each with what was sent to it (a rearrange sends each its order). */
export function sentTo(intent: WriteIntent): [number, Record<string, unknown>][] {
  if (intent.op !== "rearrange") return intent.id === null ? [] : [[intent.id, intent.send]];
  const orders = (intent.send.orders ?? {}) as Record<string, number>;
  return Object.entries(orders).map(([id, order]) => [Number(id), { order }]);
}

// Precompiled by the build; from source (the tests) compiled at first use (src/precompiled.ts). A
// literal import, so that the action's bundle holds the generated module.
const getJournalLineValidator = await precompiledValidator(
  import("./journal-validator.generated.js") as Promise<{ validate: ValidateFunction<JournalLine> }>,
  "the journal validator",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () => new Ajv(JSON_FILE_AJV_OPTIONS).compile<JournalLine>(readJsonFileSchema("journal"));
  },
);

export interface Journal {
  path: string;
  header: JournalHeader;
  intents: IntentEntry[];
  /** The last outcome of each intent. */
  outcomes: Map<number, OutcomeEntry>;
  resumes: number;
  ended: boolean;
  /** From the end line: until when a write of the run may still be applied late. */
  mayLandUntil?: Date | undefined;
  /**
   * Writes announced and never answered (no outcome, or "unknown"): the service may still apply them.
   * `goneBy`: their run had ended by then (the resume or end line that followed); undefined if none.
   */
  unanswered: { seq: number; goneBy: Date | undefined }[];
  /** The file's mtime: a killed run sent nothing long after its last line. */
  modifiedAt?: Date | undefined;
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
const LINE_TYPES: readonly JournalEntry["type"][] = ["intent", "outcome", "resume", "end"];

type Check = (ok: boolean, what: string) => asserts ok;

function imageWords(list: string): Record<string, string> {
  return {
    [`${list}[]`]: "{path} is not a record",
    [`${list}[].id`]: "{path} is not a record id",
    [`${list}[].plugin`]: "{path} is not a plugin id",
    [`${list}[].enabled`]: "{path} is not true or false",
    [`${list}[].deleted`]: "{path} is not true or false",
    [`${list}[].order`]: "{path} is not an integer",
    [`${list}[].name`]: "{path} is not text or null",
    [`${list}[].description`]: "{path} is not text or null",
    [`${list}[].match_action`]: "{path} is not an id or null",
  };
}

/** The words for a line the schema refuses, by the error's place without indexes (`before[].id`). */
const LINE_WORDS: Record<string, string> = {
  command: "command is not apply, rollback or heal",
  server: "server is missing",
  startedAt: "startedAt is missing",
  projects: "projects is not a list of ids",
  families: "families is not a list of project families",
  plan: "plan is not {fingerprint, file}",
  manifests: "manifests is not a list of files",
  rollbackOf: "rollbackOf is not a path",
  seq: "seq is not a positive integer",
  op: `op is not one of ${OPS.join(", ")}`,
  project: "project is missing",
  family: "family is not a family name",
  id: "id is not a record id or null",
  name: "name is not text or null",
  send: "send is not an object",
  before: "before is not a list",
  kept: "kept is not a list of record ids",
  status: `status is not one of ${STATUSES.join(", ")}`,
  records: "records is not a list",
  pluginTexts: "pluginTexts is not an object",
  "pluginTexts[]": "pluginTexts holds something other than a name and a description",
  at: "at is missing",
  summary: "summary is missing",
  ...imageWords("before"),
  ...imageWords("records"),
};

/** The error's JSON pointer, a missing property's own place included. */
function errorPlace(error: ErrorObject): string[] {
  const pointer =
    error.keyword === "required"
      ? `${error.instancePath}/${String(error.params.missingProperty)}`
      : error.instancePath;
  return pointer.split("/").slice(1);
}

/** The line's keys in the order a reader checks them: the first bad one is the one reported. */
const KEY_ORDER = Object.keys(LINE_WORDS);

function describeLineProblem(errors: readonly ErrorObject[]): string {
  const rank = (error: ErrorObject) => {
    const index = KEY_ORDER.indexOf(errorPlace(error)[0] ?? "");
    return index < 0 ? KEY_ORDER.length : index;
  };
  const first = [...errors].sort((a, b) => rank(a) - rank(b))[0];
  if (first === undefined) return "not a line pcsync wrote";
  const segments = errorPlace(first);
  // The longest place the journal has words for, from the error's place up to the line's first key.
  for (let length = segments.length; length > 0; length -= 1) {
    const place = segments.slice(0, length);
    const key = place
      .map((segment) => (/^[0-9]+$/.test(segment) ? "[]" : `.${segment}`))
      .join("")
      .slice(1);
    const words = LINE_WORDS[key];
    if (words !== undefined) return words.replace("{path}", formatJsonPath(`/${place.join("/")}`));
  }
  return describeSchemaErrors([first], "the line").message;
}

/** Format and version are checked first: a file of another kind or version says so. */
function checkHeaderKind(value: Record<string, unknown>, check: Check): void {
  check(value.type === "header", "the first line is not a journal header");
  check(value.format === JOURNAL_FORMAT, `this is not a pcsync journal (format is not "${JOURNAL_FORMAT}")`);
  check(
    value.version === JOURNAL_VERSION,
    `journal version ${String(value.version)} is not known to this pcsync`,
  );
}

function checkLine(value: Record<string, unknown>, check: Check, first: boolean): JournalLine {
  if (first) checkHeaderKind(value, check);
  else
    check(
      LINE_TYPES.includes(value.type as JournalEntry["type"]),
      `unknown line type ${JSON.stringify(value.type)}`,
    );
  const validate = getJournalLineValidator();
  check(validate(value), validate.errors ? describeLineProblem(validate.errors) : "not a line pcsync wrote");
  const line = value as unknown as JournalLine;
  if (line.type === "intent") {
    if (line.op === "create")
      check(line.id === null && line.before.length === 0, "a create carries an id or a before image");
    else if (line.op !== "rearrange") check(line.id !== null, `an ${line.op} without a record id`);
  }
  return line;
}

export function parseJournal(text: string, path: string): Journal {
  refuseOtherKind(text, path, "journal");
  const lines = text.split("\n");
  // A complete journal ends in "\n": the last piece is then empty; anything else was cut off.
  const cutOff = lines.pop() ?? "";
  const tornLines: number[] = [];
  if (cutOff !== "") tornLines.push(lines.length + 1);
  const invalid = (line: number, reason: string) => new InputError("journal_invalid", { path, line, reason });
  if (lines.length === 0) throw invalid(1, "the journal is empty (no header line)");
  const parsed: (Record<string, unknown> | undefined)[] = lines.map((line) => {
    try {
      return asRecord(JSON.parse(line));
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
    unanswered: [],
  };
  const intentSeqs = new Set<number>();
  // The intents of the run now writing the journal with no answer yet: no outcome, or "unknown".
  const pending = new Set<number>();
  const settlePending = (goneBy: Date | undefined, ended: boolean) => {
    // An ended run's end line says until when its unknown writes may land (mayLandUntil).
    for (const seq of pending)
      if (!ended || !journal.outcomes.has(seq)) journal.unanswered.push({ seq, goneBy });
    pending.clear();
  };
  const dateOf = (text: string) => {
    const ms = Date.parse(text);
    return Number.isFinite(ms) ? new Date(ms) : undefined;
  };
  for (const [index, value] of parsed.entries()) {
    const lineNo = index + 1;
    const check: Check = (ok, what) => {
      if (!ok) throw invalid(lineNo, what);
    };
    if (value === undefined) {
      // A line cut off by a kill, which a resumed run then wrote past: tolerated.
      const next = parsed[index + 1];
      check(header !== undefined && next?.type === "resume", "not a JSON object");
      tornLines.push(lineNo);
      continue;
    }
    const line = checkLine(value, check, header === undefined);
    if (line.type === "header") {
      header = line;
      continue;
    }
    if (line.type === "intent") {
      check(!intentSeqs.has(line.seq), `seq ${line.seq} is used twice`);
      intentSeqs.add(line.seq);
      journal.intents.push(line);
      journal.intentLines.set(line.seq, lineNo);
      pending.add(line.seq);
    } else if (line.type === "outcome") {
      check(intentSeqs.has(line.seq), `an outcome for seq ${line.seq}, which no intent before it has`);
      journal.outcomes.set(line.seq, line);
      if (line.status === "unknown") pending.add(line.seq);
      else pending.delete(line.seq);
    } else if (line.type === "resume") {
      journal.resumes += 1;
      journal.ended = false;
      settlePending(dateOf(line.at), false);
    } else {
      journal.ended = true;
      settlePending(dateOf(line.at), true);
      const until = line.mayLandUntil === undefined ? undefined : dateOf(line.mayLandUntil);
      if (until !== undefined) journal.mayLandUntil = until;
    }
  }
  if (header === undefined) throw invalid(1, "no header line");
  settlePending(undefined, false);
  tornLines.sort((a, b) => a - b);
  return { ...journal, header };
}

/** The largest journal read: a run of 20,000 writes keeps a few tens of MB. */
export const MAX_JOURNAL_BYTES = 256 * 1024 * 1024;

export async function readJournal(path: string, cwd: string): Promise<Journal> {
  const read = await readBoundedText(path, cwd, MAX_JOURNAL_BYTES);
  if (read.problem !== undefined) {
    throw new InputError("journal_unreadable", {
      path,
      reason:
        read.problem.kind === "missing"
          ? "no such file"
          : read.problem.kind === "too_large"
            ? `it is over the ${formatBytes(read.problem.maxBytes)} limit for a journal`
            : read.problem.reason,
      directory: DEFAULT_JOURNAL_DIR,
    });
  }
  const journal = parseJournal(read.value, path);
  const modifiedAt = await stat(resolve(cwd, path)).then(
    (info) => info.mtime,
    () => undefined,
  );
  return { ...journal, modifiedAt };
}

/** Throws as readJournal does when there is no journal at `path`: before a lock is made beside it. */
export async function checkJournalExists(path: string, cwd: string): Promise<void> {
  await stat(resolve(cwd, path)).catch(() => readJournal(path, cwd));
}

// A header line is far shorter: a longer file without a newline is not a header cut off by a kill.
const NO_RUN_BYTES = 65_536;

/**
 * Whether the journal's run wrote nothing: absent, or no complete header line. A run's header is on
 * disk before its first write, so such a run made no change.
 */
export async function holdsNoRun(path: string, cwd: string): Promise<boolean> {
  try {
    const info = await stat(resolve(cwd, path));
    if (!info.isFile() || info.size > NO_RUN_BYTES) return false;
    return !(await readTail(resolve(cwd, path), NO_RUN_BYTES)).text.includes("\n");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

export function checkJournalServer({ path, header }: Journal, server: string): void {
  if (header.server !== server)
    throw new RefusedError("journal_server_mismatch", { path, journalServer: header.server, server });
}

export function tornLineNote(journal: Journal): string | undefined {
  if (journal.tornLines.length === 0) return undefined;
  return `note: ${journal.path}: line ${journal.tornLines.join(", ")} was cut off (the run was killed while writing it) and is ignored; the journal reads without it`;
}

/** The newest apply journal of this plan in the default directory: what `--resume` finishes. */
export async function findJournalOfPlan(cwd: string, fingerprint: string): Promise<Journal | undefined> {
  const names = await regularFilesIn(resolve(cwd, DEFAULT_JOURNAL_DIR), ".jsonl");
  // The names are UTC timestamps: newest last.
  for (const name of names.sort().reverse()) {
    const journal = await readJournal(join(DEFAULT_JOURNAL_DIR, name), cwd).catch(() => undefined);
    if (journal?.header.command === "apply" && journal.header.plan.fingerprint === fingerprint)
      return journal;
  }
  return undefined;
}
