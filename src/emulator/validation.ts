// Checks create and update bodies the way the real serializer does: fields in declaration order,
// the first error wins, unknown fields are ignored. Types of a JSON body are strict JSON types, so a
// client sending `"5"` for an integer finds out here rather than in production; a form body's text
// is first converted as the serializer converts it (form-values.ts).

import type { WritableField } from "../families.js";
import { trimAsService } from "../trim-as-service.js";
import type { PluginConfigInput } from "../wire-types.js";
import { FIELD_ORDER, FIELD_RULES, INT_MAX, INT_MIN, REQUIRED_FIELDS } from "./field-rules.js";
import { FormBody, UploadedFile } from "./form-body.js";
import { type FieldValue, readFormField } from "./form-values.js";
import { requiredField, validationError } from "./http-error.js";

/** The writable fields of a request body: the same wire shape the client sends. */
export type RecordInput = PluginConfigInput;

function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  // Python's name of the type a small upload has in the real service.
  if (value instanceof UploadedFile) return "InMemoryUploadedFile";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return "dict";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "boolean") return "bool";
  return "str";
}

/** Throws 400 unless the body is a JSON object. */
export function requireObjectBody(body: unknown): Record<string, unknown> {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    return body as Record<string, unknown>;
  }
  throw validationError(
    "invalid_input",
    `Invalid data. Expected a dictionary, but got ${jsonTypeName(body)}.`,
    null,
  );
}

function checkField(field: WritableField, value: unknown): void {
  const rule = FIELD_RULES[field];
  if (value === null) {
    if (!rule.nullable) throw validationError("null", "This field may not be null.", field);
    return;
  }
  switch (rule.kind) {
    case "related":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        const detail = `Incorrect type. Expected pk value, received ${jsonTypeName(value)}.`;
        throw validationError("invalid_input", detail, field);
      }
      return;
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        throw validationError("invalid_input", "A valid integer is required.", field);
      }
      if (value > INT_MAX) {
        throw validationError("max_value", `Ensure this value is less than or equal to ${INT_MAX}.`, field);
      }
      if (value < INT_MIN) {
        throw validationError(
          "min_value",
          `Ensure this value is greater than or equal to ${INT_MIN}.`,
          field,
        );
      }
      return;
    case "boolean":
      if (typeof value !== "boolean")
        throw validationError("invalid_input", "Must be a valid boolean.", field);
      return;
    case "string":
      if (typeof value !== "string") throw validationError("invalid_input", "Not a valid string.", field);
      if (value.length > rule.maxLength) {
        throw validationError(
          "max_length",
          `Ensure this field has no more than ${rule.maxLength} characters.`,
          field,
        );
      }
      return;
  }
}

/** A field of a JSON object body, as sent. */
function readJsonField(body: Record<string, unknown>, field: WritableField): FieldValue | undefined {
  if (!Object.hasOwn(body, field)) return undefined;
  const value = body[field];
  return { value, sent: String(value) };
}

function fieldReader(rawBody: unknown, partial: boolean): (field: WritableField) => FieldValue | undefined {
  if (rawBody instanceof FormBody) return (field) => readFormField(rawBody, field, partial);
  const body = requireObjectBody(rawBody ?? {});
  return (field) => readJsonField(body, field);
}

/**
 * Validates the writable fields present in `rawBody`, a JSON value or (posthog-2024) a FormBody.
 * A create (`partial` false) must send the required fields; an update sends any. `ignored` fields
 * are dropped unchecked (the posthog-2024 profile ignores `plugin` on update). `pluginExists`
 * turns an unknown plugin id into the serializer's does_not_exist error. `trimText` (posthog-2024)
 * strips text fields as DRF's `CharField(trim_whitespace=True)` does, before the length check.
 */
export function validateRecordInput(
  rawBody: unknown,
  options: {
    partial: boolean;
    ignored: readonly WritableField[];
    pluginExists: (id: number) => boolean;
    trimText: boolean;
  },
): RecordInput {
  const read = fieldReader(rawBody, options.partial);
  const input: Record<string, unknown> = {};
  for (const field of FIELD_ORDER) {
    if (options.ignored.includes(field)) continue;
    const sent = read(field);
    if (sent === undefined) {
      if (!options.partial && REQUIRED_FIELDS.includes(field)) throw requiredField(field);
      continue;
    }
    const value =
      options.trimText && FIELD_RULES[field].kind === "string" && typeof sent.value === "string"
        ? trimAsService(sent.value)
        : sent.value;
    checkField(field, value);
    if (field === "plugin" && typeof value === "number" && !options.pluginExists(value)) {
      throw validationError("does_not_exist", `Invalid pk "${sent.sent}" - object does not exist.`, "plugin");
    }
    input[field] = value;
  }
  return input as RecordInput;
}
