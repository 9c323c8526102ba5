// What a journal says its run did, record by record: the state before the run's first write to
// each record, and every value each field may hold now if nobody else wrote to it (one value per
// answered write; both the old and the new where an answer was lost). Pure.

import { type FamilyName, WRITABLE_FIELDS, type WritableField } from "../families.js";
import { mayShowFilled } from "../filled-defaults.js";
import { recordKey } from "../plan/fingerprint.js";
import type { FieldValue } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { IntentEntry, Journal, PluginTexts, RecordImage } from "./journal-format.js";

export interface TouchedRecord {
  project: string;
  family: FamilyName;
  id: number;
  name: string | null;
  /** As it was before the run's first write to it; null when it did not exist before the run. */
  before: RecordImage | null;
  /** The values each field may show now if only the run wrote to it. */
  after: Map<WritableField, FieldValue[]>;
  /** The journal line of the run's first write to it. */
  line: number;
  /** The plugin's own name and description, where an answer showed them. */
  pluginTexts?: PluginTexts;
}

/** A create the run sent whose answer never came: its record may or may not exist. */
export interface LostCreate {
  project: string;
  family: FamilyName;
  name: string | null;
  plugin: number | null;
  send: Record<string, unknown>;
  line: number;
}

export interface Replay {
  records: Map<string, TouchedRecord>;
  lostCreates: LostCreate[];
}

/**
 * Whether `record` shows the empty `value` of `field` as the plugin's own text, as the journal
 * knows that text (a server that fills an empty name or description with it: posthog-2024).
 */
export function showsPluginText(
  touched: TouchedRecord | undefined,
  field: WritableField,
  value: unknown,
  record: PluginConfigRecord,
): boolean {
  if (!mayShowFilled(field, value)) return false;
  const text = touched?.pluginTexts?.[field as keyof PluginTexts];
  return text !== undefined && record[field] === text;
}

function valuesOf(image: RecordImage): Map<WritableField, FieldValue[]> {
  return new Map(WRITABLE_FIELDS.map((field) => [field, [image[field] ?? null]]));
}

function addCandidate(record: TouchedRecord, field: WritableField, value: FieldValue): void {
  const values = record.after.get(field) ?? [];
  if (!values.includes(value)) values.push(value);
  record.after.set(field, values);
}

export function replayJournal(journal: Journal): Replay {
  const records = new Map<string, TouchedRecord>();
  const lostCreates: LostCreate[] = [];
  const lineOf = (intent: IntentEntry) => journal.intentLines.get(intent.seq) ?? 0;

  const touch = (intent: IntentEntry, id: number): TouchedRecord => {
    const key = recordKey(intent.project, intent.family, id);
    let record = records.get(key);
    if (!record) {
      const before = intent.before.find((image) => image.id === id) ?? null;
      record = {
        project: intent.project,
        family: intent.family,
        id,
        name: before?.name ?? intent.name,
        before,
        after: before ? valuesOf(before) : new Map(),
        line: lineOf(intent),
      };
      records.set(key, record);
    }
    return record;
  };

  for (const intent of [...journal.intents].sort((a, b) => a.seq - b.seq)) {
    const outcome = journal.outcomes.get(intent.seq);
    const status = outcome?.status ?? "unknown";
    if (status === "not_sent" || status === "failed") continue;
    const answered = new Map((outcome?.records ?? []).map((image) => [image.id, image]));
    const textsOf = (record: TouchedRecord) => {
      const texts = outcome?.pluginTexts?.[String(record.id)];
      if (texts) record.pluginTexts = texts;
    };
    if (intent.op === "create") {
      const made = status === "done" ? outcome?.records?.[0] : undefined;
      if (made === undefined) {
        const plugin = intent.send.plugin;
        lostCreates.push({
          project: intent.project,
          family: intent.family,
          name: intent.name,
          plugin: typeof plugin === "number" ? plugin : null,
          send: intent.send,
          line: lineOf(intent),
        });
        continue;
      }
      const record = touch(intent, made.id);
      record.after = valuesOf(made);
      textsOf(record);
      continue;
    }
    const sent: [number, Record<string, unknown>][] =
      intent.op === "rearrange"
        ? Object.entries((intent.send.orders ?? {}) as Record<string, number>).map(([id, order]) => [
            Number(id),
            { order },
          ])
        : intent.id === null
          ? []
          : [[intent.id, intent.send]];
    for (const [id, body] of sent) {
      const record = touch(intent, id);
      textsOf(record);
      const answer = answered.get(id);
      if (status === "done" && answer) {
        record.after = valuesOf(answer);
        continue;
      }
      // A lost answer (or one withheld from the journal): the old values stay possible.
      if (status === "done") record.after = new Map(record.after);
      for (const [field, value] of Object.entries(body) as [WritableField, FieldValue][]) {
        if (!WRITABLE_FIELDS.includes(field)) continue;
        if (status === "done") record.after.set(field, [value]);
        else addCandidate(record, field, value);
      }
      if (body.deleted === true) {
        if (status === "done") record.after.set("enabled", [false]);
        else addCandidate(record, "enabled", false);
      }
    }
  }
  return { records, lostCreates };
}
