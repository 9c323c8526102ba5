// Checks create and update bodies the way the real serializer does: fields in declaration order,
// the first error wins, unknown fields are ignored. Types are strict JSON types, so a client sending
// `"5"` for an integer finds out here rather than in production.

import type { WritableField } from "../families.js";
import type { PluginConfigInput } from "../wire-types.js";
import { requiredField, validationError } from "./http-error.js";

/** The writable fields of a request body: the same wire shape the client sends. */
export type RecordInput = PluginConfigInput;

type FieldRule =
  | { kind: "integer"; nullable: boolean; bounded: boolean }
  | { kind: "boolean"; nullable: boolean }
  | { kind: "string"; nullable: boolean; maxLength: number };

// The database columns are 32-bit integers.
const INT_MIN = -2_147_483_648;
const INT_MAX = 2_147_483_647;

const FIELD_RULES: Readonly<Record<WritableField, FieldRule>> = {
  plugin: { kind: "integer", nullable: false, bounded: false },
  enabled: { kind: "boolean", nullable: false },
  order: { kind: "integer", nullable: false, bounded: true },
  name: { kind: "string", nullable: true, maxLength: 400 },
  description: { kind: "string", nullable: true, maxLength: 1000 },
  deleted: { kind: "boolean", nullable: false },
  match_action: { kind: "integer", nullable: true, bounded: true },
};

const FIELD_ORDER = Object.keys(FIELD_RULES) as WritableField[];

function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
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
    case "integer":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        const detail =
          field === "plugin"
            ? `Incorrect type. Expected pk value, received ${jsonTypeName(value)}.`
            : "A valid integer is required.";
        throw validationError("invalid_input", detail, field);
      }
      if (rule.bounded && value > INT_MAX) {
        throw validationError("max_value", `Ensure this value is less than or equal to ${INT_MAX}.`, field);
      }
      if (rule.bounded && value < INT_MIN) {
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

/**
 * Validates the writable fields present in `body`. `required` fields must be present; `ignored`
 * fields are dropped unchecked (the posthog-2024 profile ignores `plugin` on update).
 * `pluginExists` turns an unknown plugin id into the serializer's does_not_exist error.
 */
export function validateRecordInput(
  rawBody: unknown,
  options: {
    required: readonly WritableField[];
    ignored: readonly WritableField[];
    pluginExists: (id: number) => boolean;
  },
): RecordInput {
  const body = requireObjectBody(rawBody);
  const input: Record<string, unknown> = {};
  for (const field of FIELD_ORDER) {
    if (options.ignored.includes(field)) continue;
    if (!Object.hasOwn(body, field)) {
      if (options.required.includes(field)) throw requiredField(field);
      continue;
    }
    const value = body[field];
    checkField(field, value);
    if (field === "plugin" && typeof value === "number" && !options.pluginExists(value)) {
      throw validationError("does_not_exist", `Invalid pk "${value}" - object does not exist.`, "plugin");
    }
    input[field] = value;
  }
  return input as RecordInput;
}
