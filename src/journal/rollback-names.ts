// A rollback never leaves two live records of one name in a family: a record it brings back
// (created again, undeleted) or renames back, whose name another live record holds now, is a
// clash. Names are compared as the planner compares them (look-alikes: ends trimmed, NFC). Pure.

import { familyKey } from "../families.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { lookAlikeKey } from "../record-name.js";
import { describeRecordAt } from "./plan-rollback.js";

/** The identity the planner gives a record's name; null names are nobody's name. */
export const nameIdentity = (name: string | null): string | null =>
  name === null ? null : lookAlikeKey(name);

interface FinalRecord {
  id: number | null;
  name: string | null;
  /** Brought back or renamed by the rollback: the side of a clash that the rollback makes. */
  byRollback: boolean;
}

/** One line per clash: the record the rollback would bring back, and the live one holding its name. */
export function findNameClashes(
  plan: Pick<Plan, "changes">,
  current: CurrentState,
  retrieved: CurrentState,
): string[] {
  const families = new Map<string, { project: string; family: string; records: Map<string, FinalRecord> }>();
  const familyOf = (project: string, family: string) => {
    const key = familyKey(project, family);
    let entry = families.get(key);
    if (entry === undefined) {
      entry = { project, family, records: new Map() };
      families.set(key, entry);
    }
    return entry;
  };
  const known = new Map<string, { name: string | null }>();
  for (const state of [retrieved, current])
    for (const { project, family, records } of state.families)
      for (const record of records)
        known.set(`${familyKey(project, family)}/${record.id}`, { name: record.name });
  for (const { project, family, records } of current.families) {
    const entry = familyOf(project, family);
    for (const record of records)
      if (record.deleted !== true)
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
    const byName = new Map<string, FinalRecord[]>();
    for (const record of records.values()) {
      const identity = nameIdentity(record.name);
      if (identity === null) continue;
      byName.set(identity, [...(byName.get(identity) ?? []), record]);
    }
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
