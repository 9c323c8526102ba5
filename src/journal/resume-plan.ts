// `apply --plan FILE --resume`: what of a saved plan an interrupted run already did, from its
// journal and the current state. The state with the run's own writes taken out must still be the
// one the plan was made from (every stale-plan check applies to it); what is left is applied. Pure.

import { familyKey, WRITABLE_FIELDS } from "../families.js";
import { findStaleness } from "../plan/check-stale.js";
import { showsWritten } from "../plan/compare-fields.js";
import { summarizePlan } from "../plan/compute-plan.js";
import { recordKey } from "../plan/fingerprint.js";
import type { CurrentFamily, CurrentState, Plan, PlannedChange } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { Replay, TouchedRecord } from "./replay-journal.js";

export interface ResumeResult {
  /** Why the plan is stale, beyond what the journal's run did; empty when it is not. */
  reasons: string[];
  /** The plan's changes and moves that are still to do. */
  remaining: Plan;
  /** How many of the plan's changes and moves the interrupted run had done. */
  done: number;
}

/** Whether the record shows, in every field, what it was before the run or what the run left. */
function onlyTheRunChanged(touched: TouchedRecord, record: PluginConfigRecord): boolean {
  return WRITABLE_FIELDS.every((field) => {
    const values = [...(touched.after.get(field) ?? []), touched.before?.[field] ?? null];
    return values.some((value) => showsWritten(field, value, record));
  });
}

export function planResume(plan: Plan, replay: Replay, current: CurrentState): ResumeResult {
  const runCreated = new Set<string>();
  const knownIds = new Set([...replay.records.values()].map((record) => record.id));
  const lostCreates = new Set(
    replay.lostCreates.map((lost) => `${familyKey(lost.project, lost.family)}\u0000${lost.name}`),
  );

  // The state as it would be had the run not written: what the plan's checks must find.
  const unwritten: CurrentFamily[] = current.families.map(({ project, family, records }) => {
    const listed = new Set<number>();
    const kept: PluginConfigRecord[] = [];
    for (const record of records) {
      listed.add(record.id);
      const key = recordKey(project, family, record.id);
      const touched = replay.records.get(key);
      const lost =
        !knownIds.has(record.id) && lostCreates.has(`${familyKey(project, family)}\u0000${record.name}`);
      if ((touched && touched.before === null) || lost) {
        runCreated.add(key);
        continue;
      }
      if (touched?.before && onlyTheRunChanged(touched, record))
        kept.push({ ...record, ...touched.before } as PluginConfigRecord);
      else kept.push(record);
    }
    for (const touched of replay.records.values()) {
      if (touched.project !== project || touched.family !== family || listed.has(touched.id)) continue;
      // Deleted by the run: it was in the list when the plan was made.
      if (touched.before && !touched.before.deleted) kept.push({ ...touched.before } as PluginConfigRecord);
    }
    return { project, family, records: kept };
  });
  const reasons = findStaleness(plan, { families: unwritten });

  const listOf = (project: string, family: string) =>
    current.families.find((item) => item.project === project && item.family === family)?.records ?? [];
  const isDone = (change: PlannedChange): boolean => {
    const records = listOf(change.project, change.family);
    if (change.action === "create") {
      const plugin = change.fields.plugin?.to;
      return records.some(
        (record) =>
          record.name === change.name &&
          (typeof plugin !== "number" || record.plugin === plugin) &&
          runCreated.has(recordKey(change.project, change.family, record.id)),
      );
    }
    const record = records.find((candidate) => candidate.id === change.id);
    if (change.action === "delete") return record === undefined;
    return (
      record !== undefined &&
      Object.entries(change.fields).every(
        ([field, fieldChange]) =>
          fieldChange === undefined ||
          showsWritten(field as (typeof WRITABLE_FIELDS)[number], fieldChange.to, record),
      )
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
  const remaining: Plan = {
    ...plan,
    summary: summarizePlan(changes, reorders),
    changes,
    reorders,
  };
  return { reasons, remaining, done };
}
