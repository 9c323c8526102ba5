// Reads a create or update body the way the real serializer does: fields in declaration order, the
// first error wins, unknown fields are ignored. Types of a JSON body are strict JSON types, so a
// client sending `"5"` for an integer finds out here rather than in production; a form body's text
// is first converted as the serializer converts it (form-values.ts), and only a form body sets the
// plugin `config` and its attachments (PostHog's posthog/api/plugin.py, mid-2024).

import type { WritableField } from "../families.js";
import { trimAsService } from "../trim-as-service.js";
import type { PluginConfigInput } from "../wire-types.js";
import { FIELD_ORDER, FIELD_RULES, INT_MAX, INT_MIN, REQUIRED_FIELDS } from "./field-rules.js";
import { FormBody, UploadedFile } from "./form-body.js";
import { type FieldValue, readFormField } from "./form-values.js";
import { requiredField, serverError, validationError } from "./http-error.js";
import type { ProfileBehaviour } from "./profiles.js";

/** The writable fields a body sets, and the config (JSON text) a form body sets. */
export type RecordChanges = PluginConfigInput & { config?: string };

/** What a create or update body does: its changes, files to attach by config key, keys to detach. */
export interface BodyChanges {
  changes: RecordChanges;
  attach: [string, UploadedFile][];
  detach: string[];
}

function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  // Python's name of the type a small upload has in the real service.
  if (value instanceof UploadedFile) return "InMemoryUploadedFile";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "dict";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return typeof value === "boolean" ? "bool" : "str";
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Throws 400 unless the body is a JSON object. */
export function requireObjectBody(body: unknown): Record<string, unknown> {
  if (isPlainObject(body)) return body;
  const detail = `Invalid data. Expected a dictionary, but got ${jsonTypeName(body)}.`;
  throw validationError("invalid_input", detail, null);
}

function checkField(field: WritableField, value: unknown): void {
  const rule = FIELD_RULES[field];
  const invalid = (detail: string, code = "invalid_input") => validationError(code, detail, field);
  if (value === null) {
    if (!rule.nullable) throw invalid("This field may not be null.", "null");
    return;
  }
  switch (rule.kind) {
    case "related":
      if (typeof value !== "number" || !Number.isInteger(value))
        throw invalid(`Incorrect type. Expected pk value, received ${jsonTypeName(value)}.`);
      return;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value))
        throw invalid("A valid integer is required.");
      if (value > INT_MAX)
        throw invalid(`Ensure this value is less than or equal to ${INT_MAX}.`, "max_value");
      if (value < INT_MIN)
        throw invalid(`Ensure this value is greater than or equal to ${INT_MIN}.`, "min_value");
      return;
    case "boolean":
      if (typeof value !== "boolean") throw invalid("Must be a valid boolean.");
      return;
    case "string":
      if (typeof value !== "string") throw invalid("Not a valid string.");
      if (value.length > rule.maxLength)
        throw invalid(`Ensure this field has no more than ${rule.maxLength} characters.`, "max_length");
      return;
  }
}

function fieldReader(rawBody: unknown, partial: boolean): (field: WritableField) => FieldValue | undefined {
  if (rawBody instanceof FormBody) return (field) => readFormField(rawBody, field, partial);
  const body = requireObjectBody(rawBody ?? {});
  return (field) =>
    Object.hasOwn(body, field) ? { value: body[field], sent: String(body[field]) } : undefined;
}

/**
 * The serializer never reads `config` from a JSON body. From a form body (the service's UI sends
 * multipart) `_fix_formdata_config_json` parses a `config` text field that is not empty, files left
 * out: text that is not JSON fails inside the service, a 500 after validation and before any write.
 * Files named `add_attachment[KEY]` are attached to KEY, and text fields `remove_attachment[KEY]`
 * detach it.
 */
function withConfigChanges(body: unknown, changes: RecordChanges): BodyChanges {
  if (!(body instanceof FormBody)) return { changes, attach: [], detach: [] };
  const attach = body.fileEntries().flatMap(([name, file]) => {
    const key = /^add_attachment\[([^\]]+)\]$/.exec(name)?.[1];
    return key === undefined ? [] : [[key, file] as [string, UploadedFile]];
  });
  const detach = body.fieldNames().flatMap((name) => /^remove_attachment\[([^\]]+)\]$/.exec(name)?.[1] ?? []);
  const text = body.textField("config");
  if (text === undefined || text === "") return { changes, attach, detach };
  let config: string;
  try {
    config = JSON.stringify(JSON.parse(text));
  } catch {
    throw serverError();
  }
  return { changes: { ...changes, config }, attach, detach };
}

/**
 * Validates the writable fields present in `rawBody`, a JSON value or (posthog-2024) a FormBody. A
 * create (`partial` false) must send the required fields; an update sends any. `pluginExists` turns
 * an unknown plugin id into the serializer's does_not_exist error.
 */
export function readRecordChanges(
  rawBody: unknown,
  partial: boolean,
  profile: ProfileBehaviour,
  pluginExists: (id: number) => boolean,
): BodyChanges {
  const read = fieldReader(rawBody, partial);
  const changes: Record<string, unknown> = {};
  for (const field of FIELD_ORDER) {
    // The posthog-2024 profile drops `plugin` on update unchecked.
    if (partial && field === "plugin" && !profile.pluginWritableOnUpdate) continue;
    const sent = read(field);
    if (sent === undefined) {
      if (!partial && REQUIRED_FIELDS.includes(field)) throw requiredField(field);
      continue;
    }
    // posthog-2024 strips text as DRF's `CharField(trim_whitespace=True)` does, before the length check.
    const trims = profile.trimsText && FIELD_RULES[field].kind === "string" && typeof sent.value === "string";
    const value = trims ? trimAsService(String(sent.value)) : sent.value;
    checkField(field, value);
    if (field === "plugin" && typeof value === "number" && !pluginExists(value)) {
      throw validationError("does_not_exist", `Invalid pk "${sent.sent}" - object does not exist.`, "plugin");
    }
    changes[field] = value;
  }
  return withConfigChanges(rawBody, changes as RecordChanges);
}
