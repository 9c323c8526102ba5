// The planner's part of `owner:`: which mark each write carries, which claimed records another
// owner holds, and which unclaimed records prune may delete. Pure; compute-plan.ts calls it. A
// plan without an owner gets nothing from here, and behaves as it did before owners.

import { pluginDefaults } from "../filled-defaults.js";
import type { DesiredConfig } from "../manifest/types.js";
import { readMark } from "../owner-mark.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { ChangeMark, FamilyReport, FieldChanges } from "./types.js";

export interface OwnerSettings {
  /** The manifest's `owner:`. */
  name: string;
  /** `--takeover`: a record marked by another owner may be claimed (and marked with this one). */
  takeover: boolean;
}

/** A config that matches a record another owner marked, without `--takeover`. */
export interface OwnerConflict {
  config: DesiredConfig;
  record: PluginConfigRecord;
  owner: string;
}

/** The owner of a record, as its description's mark says; null when it carries none. */
export function ownerOf(record: PluginConfigRecord): string | null {
  return readMark(record.description).owner;
}

/** The mark a create writes. */
export function markForCreate(owner: OwnerSettings | undefined): { mark?: ChangeMark } {
  return owner === undefined ? {} : { mark: { owner: owner.name } };
}

/**
 * The mark an update of a claimed record writes, if any: when it changes the description, or when
 * the record changes hands (adopted, or taken over). Undefined `mark` and `conflict` alike: the
 * record is this owner's already, and the change leaves its description alone.
 */
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
  // The text to keep under the mark: the manifest's when it manages the description (whatever
  // the service shows for it), else what the record has.
  if (fields.description === undefined) {
    const desired = config.fields.description;
    mark.keep = desired === undefined ? ownText(record, read.text) : desired;
  }
  return { mark };
}

/**
 * The text a record holds of its own, to keep under a new mark: none where the service shows the
 * plugin's own description for an empty one (posthog-2024), which is not the record's to keep.
 */
function ownText(record: PluginConfigRecord, text: string | null): string | null {
  const plugin = pluginDefaults(record).description;
  return plugin !== undefined && record.description === plugin ? null : text;
}

/** Of the records no config claims, those prune deletes, and those it leaves alone and why. */
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

/** The owner of an unmanaged record, for an owner's plan: present when it carries a mark. */
export function unmanagedOwner(
  owner: OwnerSettings | undefined,
  record: PluginConfigRecord,
): { owner?: string } {
  if (owner === undefined) return {};
  const recordOwner = ownerOf(record);
  return recordOwner === null ? {} : { owner: recordOwner };
}

/** The message of a conflict: who holds the record, and the ways on. */
export function describeOwnerConflict(conflict: OwnerConflict, where: string, ownName: string): string {
  const { config, record, owner } = conflict;
  return `config "${config.fields.name}" matches record ${record.id} in ${where}, which owner "${owner}" manages (its description carries that owner's mark), not "${ownName}": rename this config, or pass --takeover to take the record over for "${ownName}"`;
}

/**
 * Of several unclaimed records with a config's name, the one this owner marked, when there is
 * exactly one: two owners may each hold a record of one name. Otherwise all of them (ambiguous).
 */
export function preferOwnRecord(
  owner: OwnerSettings | undefined,
  named: PluginConfigRecord[],
): PluginConfigRecord[] {
  if (owner === undefined || named.length < 2) return named;
  const own = named.filter((record) => ownerOf(record) === owner.name);
  return own.length === 1 ? own : named;
}
