// Field comparison between a desired config and a remote record, including the server's habit
// (posthog-2024) of showing the plugin's own name/description where the record's is null or "".
// A description is read through description-view.ts: a manifest's text is compared without the
// owner mark, a value a journal or a write holds as stored, mark included (showsStored).

import { descriptionText, holdsDescriptionText, storesDescription } from "../description-view.js";
import type { WritableField } from "../families.js";
import { mayShowFilled, pluginDefaults } from "../filled-defaults.js";
import type { DesiredFields, FieldsMode, IgnorableField } from "../manifest/types.js";
import { isTrimmedField, showsText } from "../trim-as-service.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { FieldChanges, FieldValue } from "./types.js";

/** Fields compared as updates; `order` is handled by the reorder. */
const UPDATE_FIELDS = ["plugin", "name", "enabled", "description", "match_action"] as const;

/** What the record shows in `field`, as pcsync compares and prints it: a description without its mark. */
export function shownValue(field: WritableField, record: PluginConfigRecord): FieldValue {
  return field === "description" ? descriptionText(record.description) : (record[field] ?? null);
}

/**
 * Whether the record shows `written` in `field`. Text counts as stored as sent or as a trimming
 * service (posthog-2024) stores it (trim-as-service.ts). A name or description written as null, or as
 * text that is empty once trimmed, may come back as the plugin's own (posthog-2024): that is the
 * empty value written.
 */
export function showsWritten(field: WritableField, written: FieldValue, record: PluginConfigRecord): boolean {
  if (field === "description")
    return (written === null || typeof written === "string") && holdsDescriptionText(written, record);
  const shown = shownValue(field, record);
  if (shown === written) return true;
  if (isTrimmedField(field) && typeof written === "string" && showsText(written, shown)) return true;
  return mayShowFilled(field, written) && shown === pluginDefaults(record)[field as "name" | "description"];
}

/**
 * Whether the record stores `value` in `field` as the service stored it when written: for a
 * description, mark included (a journal's images, a write sent as it is). Other fields as
 * showsWritten.
 */
export function showsStored(field: WritableField, value: FieldValue, record: PluginConfigRecord): boolean {
  if (field !== "description") return showsWritten(field, value, record);
  return (value === null || typeof value === "string") && storesDescription(value, record);
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
