// `apply --plan FILE --resume`: the state with the interrupted run's writes taken out must still be
// the one the plan was made from (every stale check applies); what is left is applied. Pure.

import { findPlanProblems } from "../apply/check-saved-plan.js";
import { isRecordOfCreate } from "../apply/dedupe-creates.js";
import { markProblem, showsChange } from "../apply/write-mark.js";
import { familyKey, ofFamily, WRITABLE_FIELDS } from "../families.js";
import { listMayShow } from "../family-lists.js";
import { showsStored } from "../plan/compare-fields.js";
import { fingerprintMembership, projectRecordKey } from "../plan/fingerprint.js";
import { summarizePlan } from "../plan/plan-file.js";
import type { CurrentFamily, CurrentState, Plan, PlannedChange } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { type Replay, recordsOfLostCreate, showsPluginText, type TouchedRecord } from "./replay-journal.js";

export interface ResumeResult {
  /** Why the plan is stale, beyond what the journal's run did; empty when it is not. */
  reasons: string[];
  remaining: Plan;
  /** Changes and moves the interrupted run had done. */
  done: number;
}

/** Whether every field shows its value before the run or what the run left. */
function onlyTheRunChanged(touched: TouchedRecord, record: PluginConfigRecord): boolean {
  return WRITABLE_FIELDS.every((field) => {
    const values = [...(touched.after.get(field) ?? []), touched.before?.[field] ?? null];
    // The journal's images hold descriptions as stored, owner mark included.
    return values.some(
      (value) => showsStored(field, value, record) || showsPluginText(touched, field, value, record),
    );
  });
}

export function planResume(plan: Plan, replay: Replay, current: CurrentState): ResumeResult {
  const runCreated = new Set<string>();
  const touchedById = new Map<string, TouchedRecord>();
  for (const touched of replay.records.values())
    touchedById.set(projectRecordKey(touched.project, touched.id), touched);
  // A record is a lost create's as the rollback finds one (recordsOfLostCreate), in whichever
  // list shows it.
  const lostCreated = new Set(
    replay.lostCreates.flatMap((lost) =>
      recordsOfLostCreate(lost, current).matching.map((record) => projectRecordKey(lost.project, record.id)),
    ),
  );
  const idsIn = new Map<string, Set<number>>();
  for (const { project, family, records } of current.families)
    idsIn.set(familyKey(project, family), new Set(records.map((record) => record.id)));

  // The state as it would be had the run not written: what the plan's checks must find.
  const unwritten: CurrentFamily[] = current.families.map(({ project, family, records }) => {
    const kept: PluginConfigRecord[] = [];
    for (const record of records) {
      const touched = touchedById.get(projectRecordKey(project, record.id));
      const lost = touched === undefined && lostCreated.has(projectRecordKey(project, record.id));
      if ((touched && touched.before === null) || lost) {
        runCreated.add(projectRecordKey(project, record.id));
        continue;
      }
      if (touched?.before && onlyTheRunChanged(touched, record))
        kept.push({ ...record, ...touched.before } as PluginConfigRecord);
      else kept.push(record);
    }
    const listed = idsIn.get(familyKey(project, family)) ?? new Set<number>();
    // Deleted by the run, of a family this list may show but with no record of it left to tell.
    const untold: PluginConfigRecord[] = [];
    for (const touched of replay.records.values()) {
      if (touched.project !== project || listed.has(touched.id) || !touched.before || touched.before.deleted)
        continue;
      // Deleted by the run: it was in this list too if this list shows that family's records, which
      // is the server's choice (posthog-2024's plugin_configs shows the frontend apps; seed's does
      // not): it does when every record of that family's list is in it. One still in its own
      // family's list was not deleted, only not of this list.
      const own = idsIn.get(familyKey(project, touched.family));
      if (own?.has(touched.id) || !listMayShow(family, touched.family)) continue;
      const before = { ...touched.before } as PluginConfigRecord;
      if (touched.family === family) kept.push(before);
      else if (own === undefined || own.size === 0) untold.push(before);
      else if ([...own].every((id) => listed.has(id))) kept.push(before);
    }
    // None of that family left to tell (the run deleted all): this list held them if, with them, it
    // is the list the plan was made from.
    const membership = plan.families.find(ofFamily(project, family))?.membership;
    if (untold.length > 0 && fingerprintMembership([...kept, ...untold]) === membership)
      for (const record of untold) kept.push(record);
    return { project, family, records: kept };
  });
  const reasons = findPlanProblems(plan, { families: unwritten });

  const listOf = (project: string, family: string) =>
    current.families.find(ofFamily(project, family))?.records ?? [];
  const isDone = (change: PlannedChange): boolean => {
    const records = listOf(change.project, change.family);
    if (change.action === "create") {
      const create = { name: change.name, plugin: change.fields.plugin?.to };
      return records.some(
        (record) =>
          isRecordOfCreate(create, record) && runCreated.has(projectRecordKey(change.project, record.id)),
      );
    }
    const record = records.find((candidate) => candidate.id === change.id);
    if (change.action === "delete") return record === undefined;
    return (
      record !== undefined &&
      (Object.keys(change.fields) as (typeof WRITABLE_FIELDS)[number][]).every(
        (field) =>
          showsChange(change, field, record) ||
          (change.mark === undefined &&
            showsPluginText(
              touchedById.get(projectRecordKey(change.project, record.id)),
              field,
              change.fields[field]?.to,
              record,
            )),
      ) &&
      markProblem(change, record) === undefined
    );
  };
  const changes = plan.changes.filter((change) => !isDone(change));
  let done = plan.changes.length - changes.length;
  const reorders = plan.reorders.flatMap((reorder) => {
    const records = listOf(reorder.project, reorder.family);
    const moves = reorder.moves.filter(
      (move) => records.find((record) => record.id === move.id)?.order !== move.to,
    );
    done += reorder.moves.length - moves.length;
    return moves.length === 0 ? [] : [{ ...reorder, moves }];
  });
  const remaining: Plan = { ...plan, summary: summarizePlan(changes, reorders), changes, reorders };
  return { reasons, remaining, done };
}
