// Field comparison between a desired config and a remote record, including the server's habit
// (posthog-2024) of showing the plugin's own name/description where the record's is null or "".
// A description is compared without its owner mark (owner-mark.ts), whoever wrote it.

import type { WritableField } from "../families.js";
import type { DesiredFields, FieldsMode, IgnorableField } from "../manifest/types.js";
import { stripMark } from "../owner-mark.js";
import { isTrimmedField, showsText, trimAsService } from "../service-text.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { FieldChanges, FieldValue } from "./types.js";

/** Fields compared as updates; `order` is handled by the reorder. */
const UPDATE_FIELDS = ["plugin", "name", "enabled", "description", "match_action"] as const;

/** The plugin's own name and description, when the record's `plugin_info` carries them. */
export function pluginDefaults(record: PluginConfigRecord): { name?: string; description?: string } {
  let info: unknown = record.plugin_info;
  if (typeof info === "string") {
    try {
      info = JSON.parse(info);
    } catch {
      return {};
    }
  }
  if (typeof info !== "object" || info === null) return {};
  const { name, description } = info as { name?: unknown; description?: unknown };
  return {
    ...(typeof name === "string" ? { name } : {}),
    ...(typeof description === "string" ? { description } : {}),
  };
}

/**
 * Whether the record shows `written` in `field`. Text counts as stored as sent or as a trimming
 * service (posthog-2024) stores it (service-text.ts). A name or description written as null, or as
 * text that is empty once trimmed, may come back as the plugin's own (posthog-2024): that is the
 * empty value written.
 */
/** What the record shows in `field`, as pcsync compares and prints it: a description without its mark. */
export function shownValue(field: WritableField, record: PluginConfigRecord): FieldValue {
  return field === "description" ? stripMark(record.description) : (record[field] ?? null);
}

export function showsWritten(field: WritableField, written: FieldValue, record: PluginConfigRecord): boolean {
  const shown = shownValue(field, record);
  if (shown === written) return true;
  if (!isTrimmedField(field)) return false;
  if (typeof written === "string" && showsText(written, shown)) return true;
  if (written === null || (typeof written === "string" && trimAsService(written) === "")) {
    return shown === pluginDefaults(record)[field];
  }
  return false;
}

/**
 * The fields the manifest sets that differ on the record (order excluded), and how many differences
 * were left alone because the config's `ignore_fields` names the field.
 */
export function diffFields(
  desired: DesiredFields,
  record: PluginConfigRecord,
): { changes: FieldChanges; ignored: number } {
  const changes: FieldChanges = {};
  let ignored = 0;
  for (const field of UPDATE_FIELDS) {
    const value = desired[field];
    if (value === undefined || showsWritten(field, value, record)) continue;
    if (isIgnored(desired, field)) ignored += 1;
    else changes[field] = { from: shownValue(field, record), to: value };
  }
  return { changes, ignored };
}

/** Whether the config's `ignore_fields` names the field: never compared or written once the record exists. */
export function isIgnored(desired: DesiredFields, field: IgnorableField | "name"): boolean {
  return field !== "name" && desired.ignore_fields?.includes(field) === true;
}

/** What `fields: all` manages where a config says nothing: the service's defaults for a new record. */
const SERVICE_DEFAULTS = {
  enabled: false,
  description: null,
  match_action: null,
} as const satisfies Partial<DesiredFields>;

/** The config's fields as the family manages them: with `fields: all`, the defaults fill what it leaves out. */
export function managedFields(desired: DesiredFields, mode: FieldsMode | undefined): DesiredFields {
  return mode === "all" ? { ...SERVICE_DEFAULTS, ...desired } : desired;
}

/** The fields a create sends: everything the manifest sets, `plugin` and `order` always. */
export function createFields(desired: DesiredFields): FieldChanges {
  const changes: FieldChanges = {};
  const ordered = ["plugin", "name", "enabled", "description", "match_action", "order"] as const;
  for (const field of ordered) {
    const value = desired[field];
    if (value !== undefined) changes[field] = { from: undefined, to: value };
  }
  return changes;
}
