// The planner's part of `owner:`: which mark each write carries, which claimed records another owner
// holds, and which unclaimed records prune may delete. A plan without an owner gets nothing from here.

import { pluginDefaults } from "../filled-defaults.js";
import type { DesiredConfig } from "../manifest/types.js";
import { readMark } from "../owner-mark.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { ChangeMark, FamilyReport, FieldChanges } from "./types.js";

export interface OwnerSettings {
  name: string;
  takeover: boolean;
}

/** A config that matches a record another owner marked, without `--takeover`. */
export interface OwnerConflict {
  config: DesiredConfig;
  record: PluginConfigRecord;
  owner: string;
}

export function ownerOf(record: PluginConfigRecord): string | null {
  return readMark(record.description).owner;
}

export function markForCreate(owner: OwnerSettings | undefined): { mark?: ChangeMark } {
  return owner === undefined ? {} : { mark: { owner: owner.name } };
}

/** A mark is written when the update changes the description or the record changes hands. */
export function markForUpdate(
  owner: OwnerSettings | undefined,
  config: DesiredConfig,
  record: PluginConfigRecord,
  fields: FieldChanges,
): { mark?: ChangeMark; conflict?: OwnerConflict } {
  if (owner === undefined) return {};
  const read = readMark(record.description);
  if (read.owner === owner.name)
    return fields.description === undefined ? {} : { mark: { owner: owner.name } };
  if (read.owner !== null && !owner.takeover) return { conflict: { config, record, owner: read.owner } };
  const mark: ChangeMark = { owner: owner.name, from: read.owner };
  // The manifest's description when it manages one (whatever the service shows), else the record's.
  if (fields.description === undefined) {
    const desired = config.fields.description;
    mark.keep = desired === undefined ? ownText(record, read.text) : desired;
  }
  return { mark };
}

/** None where the service shows the plugin's own description for an empty one (posthog-2024). */
function ownText(record: PluginConfigRecord, text: string | null): string | null {
  const plugin = pluginDefaults(record).description;
  return plugin !== undefined && record.description === plugin ? null : text;
}

export function splitPrunable(
  owner: OwnerSettings | undefined,
  unclaimed: readonly PluginConfigRecord[],
): {
  prunable: PluginConfigRecord[];
  kept: PluginConfigRecord[];
  pruneKept?: NonNullable<FamilyReport["pruneKept"]>;
} {
  if (owner === undefined) return { prunable: [...unclaimed], kept: [] };
  const prunable: PluginConfigRecord[] = [];
  const kept: PluginConfigRecord[] = [];
  const pruneKept = { unmarked: 0, otherOwners: 0 };
  for (const record of unclaimed) {
    const recordOwner = ownerOf(record);
    if (recordOwner === owner.name) prunable.push(record);
    else {
      kept.push(record);
      if (recordOwner === null) pruneKept.unmarked += 1;
      else pruneKept.otherOwners += 1;
    }
  }
  return { prunable, kept, pruneKept };
}

export function unmanagedOwner(
  owner: OwnerSettings | undefined,
  record: PluginConfigRecord,
): { owner?: string } {
  if (owner === undefined) return {};
  const recordOwner = ownerOf(record);
  return recordOwner === null ? {} : { owner: recordOwner };
}

export function describeOwnerConflict(conflict: OwnerConflict, where: string, ownName: string): string {
  const { config, record, owner } = conflict;
  return `config "${config.fields.name}" matches record ${record.id} in ${where}, which owner "${owner}" manages (its description carries that owner's mark), not "${ownName}": rename this config, or pass --takeover to take the record over for "${ownName}"`;
}

/** Two owners may each hold a record of one name: this owner's, when exactly one, else all (ambiguous). */
export function preferOwnRecord(
  owner: OwnerSettings | undefined,
  named: PluginConfigRecord[],
): PluginConfigRecord[] {
  if (owner === undefined || named.length < 2) return named;
  const own = named.filter((record) => ownerOf(record) === owner.name);
  return own.length === 1 ? own : named;
}
