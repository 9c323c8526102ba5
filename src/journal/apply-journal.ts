// The write-ahead journal of one apply or rollback: a header, then per write its intent with the
// before image of each record it touches (on disk before the write is sent), and its outcome.

import { createHash, randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { WriteIntent, WriteJournal, WriteOutcome } from "../apply/record-writer.js";
import type { ApplyReport } from "../apply/types.js";
import type { RunInput } from "../files/output-target.js";
import { pluginDefaults } from "../filled-defaults.js";
import { InputError } from "../input-error.js";
import { familiesTouchedBy } from "../plan/check-stale.js";
import { projectRecordKey } from "../plan/fingerprint.js";
import { serializePlan } from "../plan/plan-file.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { locateSecrets, type SecretRegistry } from "../redact.js";
import { JournalFile } from "./journal-file.js";
import {
  DEFAULT_JOURNAL_DIR,
  imageOf,
  JOURNAL_FORMAT,
  JOURNAL_VERSION,
  type Journal,
  type JournalEntry,
  type JournalHeader,
  type PluginTexts,
  type RecordImage,
  sentTo,
} from "./journal-format.js";

/** `label` says what wrote it (`heal`, a rollout's wave), after the time: `…-<suffix>-heal.jsonl`. */
export function defaultJournalPath(now: Date, label?: string): string {
  // No ":" in the name: artifact stores and some file systems refuse it. The suffix keeps two runs
  // started in the same millisecond apart; names still sort by time.
  const suffix = randomBytes(3).toString("hex");
  const labelled = label === undefined ? "" : `-${label}`;
  return join(DEFAULT_JOURNAL_DIR, `${now.toISOString().replace(/:/g, "-")}-${suffix}${labelled}.jsonl`);
}

/** What ties a journal to the plan it applied. */
export function fingerprintPlan(plan: Plan): string {
  return createHash("sha256").update(serializePlan(plan)).digest("hex");
}

export function manifestsOf(plan: Plan): string[] {
  const files = new Set<string>();
  for (const item of [...plan.changes, ...plan.reorders]) {
    const colon = item.source.lastIndexOf(":");
    files.add(colon > 0 ? item.source.slice(0, colon) : item.source);
  }
  return [...files].sort();
}

/** Only the default directory is made: a --journal PATH in a directory that is not there is a typo. */
export async function makeDefaultDirectory(path: string, cwd: string): Promise<void> {
  if (path.startsWith(DEFAULT_JOURNAL_DIR))
    await mkdir(dirname(resolve(cwd, path)), { recursive: true, mode: 0o700 });
}

export interface JournalStart {
  command: JournalHeader["command"];
  server: string;
  plan: Plan;
  planFile: string | null;
  /** As its file holds it (`--resume` finds the journal by its fingerprint): apply recomputes guards. */
  saved?: Plan | undefined;
  rollbackOf?: string;
}

export class ApplyJournal implements WriteJournal {
  #seq: number;
  readonly #images = new Map<string, RecordImage>();

  private constructor(
    private readonly file: JournalFile,
    /** As the user gave it. */
    readonly path: string,
    current: CurrentState,
    lastSeq: number,
    /** A journal line never holds one. */
    private readonly secrets: SecretRegistry,
  ) {
    this.#seq = lastSeq;
    for (const { project, records } of current.families)
      for (const record of records) this.#images.set(projectRecordKey(project, record.id), imageOf(record));
  }

  /** The header is on disk before anything else. */
  static async start(
    path: string,
    files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry },
    start: JournalStart,
    current: CurrentState,
  ): Promise<ApplyJournal> {
    await makeDefaultDirectory(path, files.cwd);
    const file = await JournalFile.openForAppend(path, { fresh: true, ...files });
    const { plan } = start;
    const families = familiesTouchedBy(plan);
    const header: JournalHeader = {
      type: "header",
      format: JOURNAL_FORMAT,
      version: JOURNAL_VERSION,
      command: start.command,
      server: start.server,
      startedAt: new Date().toISOString(),
      projects: [...new Set(families.map((item) => item.project))],
      families,
      plan: { fingerprint: fingerprintPlan(start.saved ?? plan), file: start.planFile },
      manifests: manifestsOf(plan),
      ...(start.rollbackOf === undefined ? {} : { rollbackOf: start.rollbackOf }),
      ...(plan.owner === undefined ? {} : { owner: plan.owner }),
    };
    const journal = new ApplyJournal(file, path, current, 0, files.secrets);
    journal.#append(header);
    await file.sync();
    return journal;
  }

  static async resume(
    journal: Journal,
    files: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry },
    current: CurrentState,
  ): Promise<ApplyJournal> {
    const file = await JournalFile.openForAppend(journal.path, { fresh: false, ...files });
    const lastSeq = journal.intents.reduce((max, intent) => Math.max(max, intent.seq), 0);
    const resumed = new ApplyJournal(file, journal.path, current, lastSeq, files.secrets);
    resumed.#append({ type: "resume", at: new Date().toISOString() });
    await file.sync();
    return resumed;
  }

  #append(entry: JournalEntry | JournalHeader): void {
    this.file.append(JSON.stringify(entry));
  }

  async intend(intent: WriteIntent): Promise<number> {
    const seq = ++this.#seq;
    const { project, family } = intent;
    const ids = sentTo(intent).map(([id]) => id);
    const before = ids.flatMap((id) => this.#images.get(projectRecordKey(project, id)) ?? []);
    const entry: JournalEntry = { type: "intent", seq, ...intent, before };
    if (locateSecrets(entry, this.secrets).length > 0)
      throw new InputError("journal_would_hold_key", { intent: intent });
    this.#pending.set(seq, { project, family, ids: intent.op === "create" ? null : ids });
    this.#append(entry);
    await this.file.sync();
    return seq;
  }

  recordOutcome(seq: number, outcome: WriteOutcome): void {
    const pending = this.#pending.get(seq);
    this.#pending.delete(seq);
    const entry: JournalEntry = { type: "outcome", seq, status: outcome.status };
    if (outcome.status === "done" && outcome.records && pending) {
      const wanted = pending.ids === null ? undefined : new Set(pending.ids);
      const records = outcome.records
        .filter((record) => wanted === undefined || wanted.has(record.id))
        .map(imageOf);
      for (const image of records) this.#images.set(projectRecordKey(pending.project, image.id), image);
      // The answer as the server gave it, unless it would hold the key: then the intent says enough.
      if (locateSecrets(records, this.secrets).length === 0) entry.records = records;
      // What a server that shows the plugin's own name or description for an empty one shows: a
      // before image read from a list may hold that text where the record holds nothing.
      const defaults: Record<string, PluginTexts> = {};
      for (const record of outcome.records) {
        const texts = pluginDefaults(record);
        if ((texts.name !== undefined || texts.description !== undefined) && (wanted?.has(record.id) ?? true))
          defaults[String(record.id)] = texts;
      }
      if (Object.keys(defaults).length > 0 && locateSecrets(defaults, this.secrets).length === 0)
        entry.pluginTexts = defaults;
    }
    this.#append(entry);
  }

  async finish(
    report:
      | Pick<ApplyReport, "done" | "failed" | "skipped" | "unknown" | "interrupted" | "mayLandUntil">
      | undefined,
  ): Promise<void> {
    if (report !== undefined) {
      const { done, failed, skipped, unknown, interrupted, mayLandUntil } = report;
      this.#append({
        type: "end",
        at: new Date().toISOString(),
        summary: { done, failed, skipped, unknown },
        interrupted,
        ...(mayLandUntil === undefined ? {} : { mayLandUntil: mayLandUntil.toISOString() }),
      });
    }
    await this.file.close();
  }

  readonly #pending = new Map<number, { project: string; family: string; ids: number[] | null }>();
}
