// Compares a desired config with a record, allowing for posthog-2024 showing the plugin's own
// name/description where the record's is null or "" (and for the owner mark: description-view.ts).

import { descriptionText, holdsDescriptionText, storesDescription } from "../description-view.js";
import type { WritableField } from "../families.js";
import { mayShowFilled, pluginDefaults } from "../filled-defaults.js";
import type { DesiredFields, FieldsMode, IgnorableField } from "../manifest/types.js";
import { isTrimmedField, showsText } from "../trim-as-service.js";
import type { PluginConfigRecord } from "../wire-types.js";
import type { FieldChanges, FieldValue } from "./types.js";

// `order` is the reorder's.
const UPDATE_FIELDS = ["plugin", "name", "enabled", "description", "match_action"] as const;

/** A description without its mark. */
export function shownValue(field: WritableField, record: PluginConfigRecord): FieldValue {
  return field === "description" ? descriptionText(record.description) : (record[field] ?? null);
}

/**
 * Text counts as stored as sent or as a trimming service stores it (trim-as-service.ts); a null or
 * blank name or description may come back as the plugin's own (posthog-2024), which counts too.
 */
export function showsWritten(field: WritableField, written: FieldValue, record: PluginConfigRecord): boolean {
  if (field === "description")
    return (written === null || typeof written === "string") && holdsDescriptionText(written, record);
  const shown = shownValue(field, record);
  if (shown === written) return true;
  if (isTrimmedField(field) && typeof written === "string" && showsText(written, shown)) return true;
  return mayShowFilled(field, written) && shown === pluginDefaults(record)[field as "name" | "description"];
}

/** As showsWritten, but a description is compared mark included (a journal's images, a write as sent). */
export function showsStored(field: WritableField, value: FieldValue, record: PluginConfigRecord): boolean {
  if (field !== "description") return showsWritten(field, value, record);
  return (value === null || typeof value === "string") && storesDescription(value, record);
}

/** Also counts the differences left alone because `ignore_fields` names the field. */
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

export function isIgnored(desired: DesiredFields, field: IgnorableField | "name"): boolean {
  return field !== "name" && desired.ignore_fields?.includes(field) === true;
}

/** What `fields: all` manages where a config says nothing: the service's defaults for a new record. */
const SERVICE_DEFAULTS = {
  enabled: false,
  description: null,
  match_action: null,
} as const satisfies Partial<DesiredFields>;

export function managedFields(desired: DesiredFields, mode: FieldsMode | undefined): DesiredFields {
  return mode === "all" ? { ...SERVICE_DEFAULTS, ...desired } : desired;
}

export function createFields(desired: DesiredFields): FieldChanges {
  const changes: FieldChanges = {};
  const ordered = ["plugin", "name", "enabled", "description", "match_action", "order"] as const;
  for (const field of ordered) {
    const value = desired[field];
    if (value !== undefined) changes[field] = { from: undefined, to: value };
  }
  return changes;
}
