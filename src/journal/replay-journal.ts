// What a journal says its run did, per record: its state before the run, and every value each field
// may hold now (both old and new where an answer was lost). Pure, but for learnPluginTexts.

import { type ApiClient, getConfig, isApiError } from "../api/index.js";
import { type EarlierCreate, isRecordOfCreate } from "../apply/dedupe-creates.js";
import { type FamilyName, ofFamily, WRITABLE_FIELDS, type WritableField } from "../families.js";
import { familiesListing } from "../family-lists.js";
import { mayShowFilled, pluginDefaults } from "../filled-defaults.js";
import { mapConcurrent } from "../map-concurrent.js";
import { projectRecordKey } from "../plan/fingerprint.js";
import type { CurrentState, FieldValue } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";
import {
  type IntentEntry,
  type Journal,
  type PluginTexts,
  type RecordImage,
  sentTo,
} from "./journal-format.js";

export interface TouchedRecord {
  project: string;
  family: FamilyName;
  id: number;
  name: string | null;
  /** Null when it did not exist before the run. */
  before: RecordImage | null;
  /** The values each field may show now if only the run wrote to it. */
  after: Map<WritableField, FieldValue[]>;
  /**
   * The fields the run changed: sent by a write that may have landed, plus `enabled` with
   * `deleted: true` (the service disables a deleted record). Another field an answer shows changed
   * is someone else's change, which a rollback never puts back.
   */
  sent: Set<WritableField>;
  /** Of the run's first write to it. */
  line: number;
  /** The plugin's own name and description, where an answer showed them. */
  pluginTexts?: PluginTexts;
  /**
   * A record an earlier run of the apply made (a copy of a create, or a config the service kept in
   * another family) that this run deleted as its copy: a rollback never brings it back.
   */
  takenBack?: true;
}

/** A create the run sent whose answer never came: its record may or may not exist. */
export interface LostCreate {
  project: string;
  family: FamilyName;
  name: string | null;
  plugin: number | null;
  send: Record<string, unknown>;
  /** Records of its config that were there before it was sent (WriteIntent.kept): not its. */
  kept: readonly number[];
  line: number;
  /** Learnt where the create sent an empty name or description (learnPluginTexts). */
  pluginTexts?: PluginTexts | undefined;
}

export interface Replay {
  records: Map<string, TouchedRecord>;
  lostCreates: LostCreate[];
}

/** Whether `record` shows the empty `value` as the plugin's own text (posthog-2024 fills it in). */
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

/** The creates the journal's run sent that may have made a record: answered (with its id), or not. */
export function createsSentBy(journal: Journal): EarlierCreate[] {
  return journal.intents.flatMap((intent) => {
    const outcome = intent.op === "create" ? journal.outcomes.get(intent.seq) : undefined;
    if (intent.op !== "create" || outcome?.status === "failed" || outcome?.status === "not_sent") return [];
    const made = outcome?.status === "done" ? outcome.records?.[0]?.id : undefined;
    const { project, family, name, send, kept = [] } = intent;
    const plugin = typeof send.plugin === "number" ? send.plugin : null;
    return [{ project, family, name, plugin, kept, ...(made === undefined ? {} : { id: made }) }];
  });
}

/**
 * The records a lost create may have made (never one there before it was sent): in its family's
 * list; else in a list that also shows the family (posthog-2024 keeps a frontend-apps config whose
 * plugin is not one under plugin_configs, and lists it there only).
 */
export function recordsOfLostCreate(
  lost: LostCreate,
  current: CurrentState,
): { family: FamilyName; matching: PluginConfigRecord[] } {
  const of = (family: FamilyName) =>
    (current.families.find(ofFamily(lost.project, family))?.records ?? []).filter(
      (record) => isRecordOfCreate(lost, record) && !lost.kept.includes(record.id),
    );
  for (const family of [lost.family, ...familiesListing(lost.family)]) {
    const matching = of(family);
    if (matching.length > 0) return { family, matching };
  }
  return { family: lost.family, matching: [] };
}

export function replayJournal(journal: Journal): Replay {
  const records = new Map<string, TouchedRecord>();
  const lostCreates: LostCreate[] = [];
  const lineOf = (intent: IntentEntry) => journal.intentLines.get(intent.seq) ?? 0;

  // One record per project id (unique across families): one made in a family and written through
  // another (posthog-2024's misplaced frontend app) is handled where the run last wrote it.
  const touch = (intent: IntentEntry, id: number): TouchedRecord => {
    const key = projectRecordKey(intent.project, id);
    let record = records.get(key);
    if (record) record.family = intent.family;
    else {
      const before = intent.before.find((image) => image.id === id) ?? null;
      record = {
        project: intent.project,
        family: intent.family,
        id,
        name: before?.name ?? intent.name,
        before,
        after: before ? valuesOf(before) : new Map(),
        sent: new Set(),
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
          kept: intent.kept ?? [],
          line: lineOf(intent),
        });
        continue;
      }
      const record = touch(intent, made.id);
      record.after = valuesOf(made);
      textsOf(record);
      continue;
    }
    for (const [id, body] of sentTo(intent)) {
      const record = touch(intent, id);
      textsOf(record);
      if (intent.op === "copy" && body.deleted === true && record.before !== null) record.takenBack = true;
      // A delete also leaves `enabled: false`: the service disables what it deletes.
      const leaves = [
        ...(Object.entries(body) as [WritableField, FieldValue][]).filter(([field]) =>
          WRITABLE_FIELDS.includes(field),
        ),
        ...(body.deleted === true ? [["enabled", false] as [WritableField, FieldValue]] : []),
      ];
      const written = new Set(leaves.map(([field]) => field));
      for (const field of written) record.sent.add(field);
      const answer = answered.get(id);
      if (status === "done" && answer) {
        // Only the fields it wrote: another changed field is someone else's write.
        record.after = new Map(record.after);
        for (const field of written) record.after.set(field, [answer[field] ?? null]);
        continue;
      }
      // A lost answer (or one withheld from the journal): the old values stay possible.
      if (status === "done") record.after = new Map(record.after);
      for (const [field, value] of leaves) {
        if (status === "done") record.after.set(field, [value]);
        else addCandidate(record, field, value);
      }
    }
  }
  return { records, lostCreates };
}

function hasTexts(texts: PluginTexts | undefined): texts is PluginTexts {
  return texts !== undefined && (texts.name !== undefined || texts.description !== undefined);
}

/**
 * Gives touched records the plugin's own texts where the journal lacks them. posthog-2024 shows them
 * for an empty name or description but leaves plugin_info out of lists, so a before image from a
 * list may hold the plugin's text; only a write's answer or a record read alone says it. One record
 * of a plugin says them for all; where nothing does, one record of it is read alone.
 */
export async function learnPluginTexts(
  client: ApiClient,
  replay: Replay,
  read: { lists: CurrentState; alone: CurrentState },
  options: { concurrency: number },
): Promise<void> {
  const pluginOf = (touched: TouchedRecord): number | undefined => {
    const plugin = touched.before?.plugin ?? touched.after.get("plugin")?.[0];
    return typeof plugin === "number" ? plugin : undefined;
  };
  // Families whose list shows plugin_info: their before images show what the records hold.
  const withInfo = new Set<string>();
  for (const { project, family, records } of read.lists.families)
    if (records.some((record) => record.plugin_info != null)) withInfo.add(`${project}/${family}`);
  const byPlugin = new Map<number, PluginTexts>();
  for (const touched of replay.records.values()) {
    const plugin = pluginOf(touched);
    if (plugin !== undefined && hasTexts(touched.pluginTexts)) byPlugin.set(plugin, touched.pluginTexts);
  }
  for (const { records } of [...read.lists.families, ...read.alone.families])
    for (const record of records) {
      const texts = pluginDefaults(record);
      if (hasTexts(texts) && !byPlugin.has(record.plugin)) byPlugin.set(record.plugin, texts);
    }
  // Only a before image can hold the plugin's text by mistake: records the run created have none.
  const lacking = [...replay.records.values()].filter(
    (touched) =>
      touched.before !== null &&
      !hasTexts(touched.pluginTexts) &&
      !withInfo.has(`${touched.project}/${touched.family}`),
  );
  // A create whose answer was lost, of an empty name or description: the record it made may show
  // the plugin's own text there, which its list (on such a server) does not say either.
  const sentEmpty = replay.lostCreates.filter(
    (lost) =>
      mayShowFilled("name", lost.send.name ?? null) ||
      mayShowFilled("description", lost.send.description ?? null),
  );
  // Read alone: a before image's record, or the lost create's (else any record of its plugin).
  const unknown = new Map<number, { project: string; family: FamilyName; id: number }[]>();
  const readAlone = (
    plugin: number | null | undefined,
    record: { project: string; family: FamilyName; id: number },
  ) => {
    if (typeof plugin === "number" && !byPlugin.has(plugin))
      unknown.set(plugin, [...(unknown.get(plugin) ?? []), record]);
  };
  for (const touched of lacking) readAlone(pluginOf(touched), touched);
  for (const lost of sentEmpty) {
    const records = read.lists.families.find(ofFamily(lost.project, lost.family))?.records ?? [];
    const record =
      records.find((candidate) => isRecordOfCreate(lost, candidate)) ??
      records.find((candidate) => candidate.plugin === lost.plugin);
    if (record !== undefined)
      readAlone(lost.plugin, { project: lost.project, family: lost.family, id: record.id });
  }
  await mapConcurrent([...unknown.values()], options.concurrency, async (candidates) => {
    for (const { project, family, id } of candidates) {
      let record: PluginConfigRecord;
      try {
        record = await getConfig(client, project, family, id);
      } catch (error) {
        if (isApiError(error, 404)) continue;
        throw error;
      }
      const texts = pluginDefaults(record);
      if (hasTexts(texts)) byPlugin.set(record.plugin, texts);
      return;
    }
  });
  for (const touched of lacking) {
    const plugin = pluginOf(touched);
    const texts = plugin === undefined ? undefined : byPlugin.get(plugin);
    if (texts) touched.pluginTexts = texts;
  }
  for (const lost of sentEmpty) {
    const texts = lost.plugin === null ? undefined : byPlugin.get(lost.plugin);
    if (texts) lost.pluginTexts = texts;
  }
}
