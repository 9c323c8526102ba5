// The inverse of a journal's run: its creates deleted, its deletes brought back (same id where the row
// remains, else created again), every field it changed put back; a field changed since is a conflict.
// Pure. Descriptions are compared as stored (owner mark included), as the journal holds them. A record
// brought or renamed back whose name another live record holds now is a clash (findNameClashes).

import { type FamilyName, familyKey, ofFamily, WRITABLE_FIELDS, type WritableField } from "../families.js";
import { idsOfOtherFamiliesIn } from "../family-lists.js";
import { mayShowFilled, showsEmptyText } from "../filled-defaults.js";
import { groupBy } from "../group-by.js";
import { readMark } from "../owner-mark.js";
import { showsStored } from "../plan/compare-fields.js";
import { assemblePlan } from "../plan/compute-plan.js";
import { fingerprintMembership, fingerprintRecord, recordKey } from "../plan/fingerprint.js";
import type {
  CurrentState,
  FamilyReport,
  FieldChanges,
  FieldValue,
  Plan,
  PlannedChange,
} from "../plan/types.js";
import { lookAlikeKey } from "../record-name.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { Journal, PluginTexts } from "./journal-format.js";
import { type Replay, recordsOfLostCreate, showsPluginText, type TouchedRecord } from "./replay-journal.js";

export interface RollbackConflict {
  project: string;
  family: FamilyName;
  id: number;
  name: string | null;
  /** `owner`: the record carries another owner's mark (`now`), not the run's (`left`). */
  field: WritableField | "record" | "owner";
  /** `left`: every value the run may have left. */
  now: FieldValue | undefined;
  left: FieldValue[];
}

export interface RollbackPlan {
  plan: Plan;
  conflicts: RollbackConflict[];
  /** How deleted records come back, and what became of lost creates. */
  notes: string[];
}

export interface RollbackInput {
  journal: Journal;
  replay: Replay;
  current: CurrentState;
  /** Records no list shows (deleted ones), read one by one; absent where the service has no such row. */
  retrieved: CurrentState;
  force: boolean;
}

const RESTORED_FIELDS: readonly WritableField[] = WRITABLE_FIELDS.filter((field) => field !== "deleted");

/** Whether `record` shows one of `values`, an empty one as the plugin's own text included (posthog-2024). */
function showsAny(
  touched: TouchedRecord,
  field: WritableField,
  values: readonly FieldValue[],
  record: PluginConfigRecord,
): boolean {
  return values.some(
    (value) => showsStored(field, value, record) || showsPluginText(touched, field, value, record),
  );
}

/**
 * Whether `record` holds a before image's value. The image is as this service stored it: white space
 * at a name's or description's ends shows the service keeps it, so it is compared exactly (trimmed,
 * a record the run renamed to a look-alike would keep its new name).
 */
function holdsBefore(field: WritableField, value: FieldValue, record: PluginConfigRecord): boolean {
  if (field === "name") return record.name === value;
  if (field === "description" && typeof value === "string" && value !== value.trim())
    return record.description === value;
  return showsStored(field, value, record);
}

/** `record 7 ("x") in project 1 plugin_configs` (src/cli/target-options.ts has the short form). */
export function describeRecordAt(item: Pick<RollbackConflict, "project" | "family" | "id" | "name">): string {
  return `record ${item.id}${item.name === null ? "" : ` ("${item.name}")`} in project ${item.project} ${item.family}`;
}

export function recordsToRetrieve(replay: Replay, current: CurrentState): TouchedRecord[] {
  const listed = listedRecords(current);
  return [...replay.records.values()].filter(
    (record) => !listed.has(recordKey(record.project, record.family, record.id)),
  );
}

function listedRecords(current: CurrentState): Map<string, PluginConfigRecord> {
  const listed = new Map<string, PluginConfigRecord>();
  for (const { project, family, records } of current.families)
    for (const record of records) listed.set(recordKey(project, family, record.id), record);
  return listed;
}

/**
 * A before image from a list may show the plugin's own text where the record holds none (posthog-2024):
 * it is put back empty, which shows it again. Not where the server shows empty texts (`fills` false).
 */
function emptiedText(
  touched: TouchedRecord,
  field: WritableField,
  value: FieldValue,
  fills: boolean,
): FieldValue {
  if (!fills || !mayShowFilled(field, null)) return value;
  return value !== null && value === touched.pluginTexts?.[field as keyof PluginTexts] ? null : value;
}

/** Every record the rollback knows as the server showed it: read now, and in the journal. */
function* shownRecords(input: RollbackInput): Iterable<{ name?: unknown; description?: unknown }> {
  const { journal, current, retrieved } = input;
  for (const family of [...current.families, ...retrieved.families]) yield* family.records;
  for (const intent of journal.intents) yield* intent.before;
  for (const outcome of journal.outcomes.values()) yield* outcome.records ?? [];
}

export function planRollback(input: RollbackInput): RollbackPlan {
  const { journal, replay, current, retrieved, force } = input;
  // Whether the server may show the plugin's own text for an empty name or description.
  const fills = !showsEmptyText(shownRecords(input));
  const listed = listedRecords({ families: [...current.families, ...retrieved.families] });
  const changes: PlannedChange[] = [];
  const conflicts: RollbackConflict[] = [];
  const notes: string[] = [];
  const fingerprints: Record<string, string> = {};
  const addChange = (
    touched: TouchedRecord,
    change: Pick<PlannedChange, "action" | "name" | "id" | "fields">,
  ): void => {
    const { project, family, line } = touched;
    const { action, name, id, fields } = change;
    changes.push({ action, project, family, name, id, fields, source: `${journal.path}:${line}` });
  };
  /** The records the journal accounts for: id to the line of the run's first write to it. */
  const knownIds = new Map<number, number>(
    [...replay.records.values()].map((record) => [record.id, record.line]),
  );

  // A record carrying another owner's mark now is theirs (claimed since, or in a race): left unless
  // forced, as the run's own apply would. A journal naming no owner is not checked.
  const owner = journal.header.owner;
  const mayWrite = (touched: TouchedRecord, now: PluginConfigRecord): boolean => {
    const holder = readMark(now.description).owner;
    if (owner === undefined || holder === null || holder === owner) return true;
    // The mark the record carried when the run found it: a --takeover run wrote (or deleted) it
    // knowingly, and its rollback gives it back as it was.
    if (touched.before !== null && readMark(touched.before.description).owner === holder) return true;
    // A mark the run wrote itself: a rollback (of a --takeover run) that gave a record back to its
    // owner is undone in turn, as the takeover was.
    const written = touched.sent.has("description") ? (touched.after.get("description") ?? []) : [];
    if (written.some((value) => readMark(typeof value === "string" ? value : null).owner === holder))
      return true;
    conflicts.push({ ...touched, field: "owner", now: holder, left: [owner] });
    return force;
  };

  const undoCreate = (touched: TouchedRecord, now: PluginConfigRecord) => {
    if (!mayWrite(touched, now)) return;
    const differing = WRITABLE_FIELDS.filter(
      (field) => !showsAny(touched, field, touched.after.get(field) ?? [now[field] ?? null], now),
    );
    for (const field of differing)
      conflicts.push({ ...touched, field, now: now[field] ?? null, left: touched.after.get(field) ?? [] });
    if (differing.length > 0 && !force) return;
    fingerprints[recordKey(touched.project, touched.family, now.id)] = fingerprintRecord(now);
    addChange(touched, { action: "delete", name: now.name ?? touched.name, id: now.id, fields: {} });
  };

  for (const touched of replay.records.values()) {
    const key = recordKey(touched.project, touched.family, touched.id);
    const now = listed.get(key) ?? null;
    const { before } = touched;
    if (touched.takenBack === true) {
      notes.push(
        `${describeRecordAt(touched)} was taken back by the run, as a copy an earlier run of it made: it is not brought back`,
      );
      continue;
    }
    if (before === null) {
      // Made during the run: it goes, unless it is gone already.
      if (now !== null && now.deleted !== true) undoCreate(touched, now);
      continue;
    }
    if (now === null) {
      if (before.deleted) continue;
      // The service no longer has the row: the record comes back under a new id.
      const fields: FieldChanges = {};
      for (const field of RESTORED_FIELDS)
        fields[field] = { from: undefined, to: emptiedText(touched, field, before[field] ?? null, fills) };
      notes.push(
        `${describeRecordAt(touched)} is gone from the service (the row too): it is created again, with a new id`,
      );
      addChange(touched, { action: "create", name: before.name, id: null, fields });
      continue;
    }
    if (!mayWrite(touched, now)) continue;
    const fields: FieldChanges = {};
    const conflictsBefore = conflicts.length;
    for (const field of WRITABLE_FIELDS) {
      const old = emptiedText(touched, field, before[field] ?? null, fills);
      if (holdsBefore(field, old, now) || showsPluginText(touched, field, old, now)) continue;
      // A deleted record is disabled by the service: enabled comes back with deleted.
      const left = touched.after.get(field) ?? [];
      if (!showsAny(touched, field, left, now)) {
        conflicts.push({ ...touched, field, now: now[field] ?? null, left });
        if (!force) continue;
      }
      // A field the run never sent is not the run's change, even forced: someone else changed it
      // (between the run's read and its write, or since), and it stays.
      if (!touched.sent.has(field)) continue;
      fields[field] = { from: now[field] ?? null, to: old };
    }
    // Nothing of the run's own to put back (undone by hand, or by a forced rollback): a change to a
    // field it never sent is someone else's and holds up nothing, or a rollout would wait for ever.
    const mine = conflicts.slice(conflictsBefore);
    const unsent = (field: RollbackConflict["field"]) =>
      field !== "record" && field !== "owner" && !touched.sent.has(field);
    if (Object.keys(fields).length === 0 && mine.every((conflict) => unsent(conflict.field))) {
      conflicts.splice(conflictsBefore);
      continue;
    }
    if (Object.keys(fields).length === 0) continue;
    if (fields.deleted?.to === false) {
      notes.push(
        `${describeRecordAt(touched)} was deleted by the run; the service still has the row: it comes back with its id (PATCH deleted: false)`,
      );
    }
    fingerprints[key] = fingerprintRecord(now);
    const name = now.deleted ? before.name : (now.name ?? before.name);
    addChange(touched, { action: "update", name, id: touched.id, fields });
  }

  const lostFound = replay.lostCreates.map((lost) => {
    const { family, matching } = recordsOfLostCreate(lost, current);
    const found = matching.filter((record) => !knownIds.has(record.id));
    return { lost, where: family, matching, found, ids: found.map((record) => record.id).join(",") };
  });
  // Lost creates of one config that find the same records (through each family that list shows) made
  // them all when there are no more records than creates: each takes one.
  const taken = new Set<number>();
  for (const { lost, where, matching, found: all, ids } of lostFound) {
    const group = lostFound.filter((other) => other.ids === ids && ids !== "");
    const shared = all.length > 1 && group.length >= all.length;
    const found = shared ? all.filter((record) => !taken.has(record.id)).slice(0, 1) : all;
    for (const record of shared ? found : []) taken.add(record.id);
    const label = `the create of "${lost.name ?? "?"}" in project ${lost.project} ${lost.family} (its answer was lost)`;
    if (shared && found.length === 0) {
      notes.push(
        `${label}: each record that matches it is taken back for another lost create of this config; this one made none`,
      );
      continue;
    }
    if (found.length === 0) {
      // A record the journal accounts for otherwise (a resumed run's answered create) is that write's.
      const ids = matching.map((record) => record.id).join(", ");
      const lines = matching.map((record) => knownIds.get(record.id) ?? "?").join(", ");
      notes.push(
        matching.length === 0
          ? `${label}: no such record is listed, so it was never made; nothing to undo`
          : matching.length === 1
            ? `${label}: it was never made; nothing to undo for it (the record of that name, ${ids}, is the write at journal line ${lines})`
            : `${label}: it was never made; nothing to undo for it (the records of that name, ${ids}, are the writes at journal lines ${lines})`,
      );
      continue;
    }
    if (found.length > 1) {
      notes.push(
        `${label}: records ${found.map((record) => record.id).join(", ")} all match it; none is deleted: delete the one the run made by hand`,
      );
      continue;
    }
    const [record] = found as [PluginConfigRecord];
    notes.push(
      `${label}: found as record ${record.id}${where === lost.family ? "" : ` among the ${where}, where the service keeps it`}${shared ? ` (records ${ids.replaceAll(",", ", ")} match it, as many as the run's lost creates of this config: each is one of theirs)` : ""}, which the rollback deletes`,
    );
    const after = new Map<WritableField, FieldValue[]>();
    for (const [field, value] of Object.entries(lost.send))
      if ((WRITABLE_FIELDS as readonly string[]).includes(field))
        after.set(field as WritableField, [value as FieldValue]);
    undoCreate(
      {
        project: lost.project,
        family: where,
        id: record.id,
        name: lost.name,
        before: null,
        after,
        sent: new Set(after.keys()),
        line: lost.line,
        ...(lost.pluginTexts === undefined ? {} : { pluginTexts: lost.pluginTexts }),
      },
      record,
    );
  }

  // One report per family the changes touch, in the order first met.
  const touchedFamilies = new Map(
    changes.map((change) => [familyKey(change.project, change.family), change]),
  );
  const families = [...touchedFamilies.values()].map(({ project, family }): FamilyReport => {
    const records = current.families.find(ofFamily(project, family))?.records ?? [];
    const membership = fingerprintMembership(records);
    return { project, family, prune: false, recordCount: records.length, membership, unmanaged: [] };
  });
  const { plan } = assemblePlan([
    { project: "", changes, reorders: [], families, fingerprints, guards: [], errors: [] },
  ]);
  if (plan === undefined) throw new Error("internal: a rollback plan has no errors to report");
  // The rollback runs as the run it undoes: its own journal names the same owner.
  return { plan: owner === undefined ? plan : { ...plan, owner }, conflicts, notes };
}

interface FinalRecord {
  id: number | null;
  name: string | null;
  /** Brought back or renamed by the rollback: its side of a clash. */
  byRollback: boolean;
}

/** One line per record the rollback would bring back under a name a live record holds. */
export function findNameClashes(
  plan: Pick<Plan, "changes">,
  current: CurrentState,
  retrieved: CurrentState,
): string[] {
  const families = new Map<
    string,
    { project: string; family: FamilyName; records: Map<string, FinalRecord> }
  >();
  const familyOf = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    const entry = families.get(key) ?? { project, family, records: new Map<string, FinalRecord>() };
    families.set(key, entry);
    return entry;
  };
  const known = new Map<string, { name: string | null }>();
  for (const state of [retrieved, current])
    for (const { project, family, records } of state.families)
      for (const record of records)
        known.set(`${familyKey(project, family)}/${record.id}`, { name: record.name });
  for (const { project, family, records } of current.families) {
    const entry = familyOf(project, family);
    // Another family's records this list also shows (posthog-2024's frontend apps in plugin_configs)
    // hold their names in their own family: a plugin config may share one.
    const others = idsOfOtherFamiliesIn(current, project, family);
    for (const record of records)
      if (record.deleted !== true && !others.has(record.id))
        entry.records.set(String(record.id), { id: record.id, name: record.name, byRollback: false });
  }
  let created = 0;
  for (const change of plan.changes) {
    const entry = familyOf(change.project, change.family);
    const renamed = change.fields.name;
    const name = renamed === undefined ? undefined : typeof renamed.to === "string" ? renamed.to : null;
    if (change.action === "create") {
      entry.records.set(`new ${++created}`, { id: null, name: name ?? change.name, byRollback: true });
      continue;
    }
    if (change.id === null) continue;
    const key = String(change.id);
    if (change.action === "delete") {
      entry.records.delete(key);
      continue;
    }
    const before = known.get(`${familyKey(change.project, change.family)}/${change.id}`);
    const comesBack = change.fields.deleted?.to === false;
    const live = entry.records.get(key);
    if (live === undefined && !comesBack) continue;
    if (change.fields.deleted?.to === true) {
      entry.records.delete(key);
      continue;
    }
    entry.records.set(key, {
      id: change.id,
      name: name !== undefined ? name : (live?.name ?? before?.name ?? change.name),
      byRollback: comesBack || name !== undefined,
    });
  }
  const clashes: string[] = [];
  for (const { project, family, records } of families.values()) {
    // By the identity the planner gives a record's name; null names are nobody's name.
    const named = [...records.values()].filter(
      (record): record is FinalRecord & { name: string } => record.name !== null,
    );
    const byName = groupBy(named, (record) => lookAlikeKey(record.name));
    for (const group of byName.values()) {
      if (group.length < 2) continue;
      for (const mine of group.filter((record) => record.byRollback)) {
        const others = group.filter((record) => record !== mine);
        const shown =
          mine.id === null
            ? `the record ${JSON.stringify(mine.name)} that the rollback would create again in project ${project} ${family}`
            : `${describeRecordAt({ project, family, id: mine.id, name: mine.name })}, which the rollback would bring back as ${JSON.stringify(mine.name)}`;
        const holders = others
          .map((other) =>
            other.id === null
              ? `another record the rollback creates, ${JSON.stringify(other.name)}`
              : `record ${other.id} (${JSON.stringify(other.name)})${other.byRollback ? ", which the rollback also brings back" : ", live now"}`,
          )
          .join(" and ");
        clashes.push(`${shown}: that name is held by ${holders}`);
      }
    }
  }
  return clashes;
}
