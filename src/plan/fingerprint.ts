// Stable hashes of what a plan read, so `apply --plan` can tell whether the world moved since.

import { createHash } from "node:crypto";
import { WRITABLE_FIELDS } from "../families.js";
import type { PluginConfigRecord } from "../wire-types.js";

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

export function fingerprintRecord(record: PluginConfigRecord): string {
  return hash(JSON.stringify(WRITABLE_FIELDS.map((field) => record[field] ?? null)));
}

export function fingerprintMembership(records: readonly PluginConfigRecord[]): string {
  const ids = records.map((record) => record.id).sort((a, b) => a - b);
  return hash(ids.join(","));
}

export function recordKey(project: string, family: string, id: number): string {
  return `${project}/${family}/${id}`;
}

/** A record by its id alone: ids are unique across a project's families, and some lists show another's records. */
export function projectRecordKey(project: string, id: number): string {
  return `${project}\u0000${id}`;
}
