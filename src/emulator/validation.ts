// Reads a create or update body as the real serializer (DRF, posthog/api/plugin.py mid-2024) does:
// fields in order, the first error wins; JSON types strict, form text converted as DRF converts it.

import type { WritableField } from "../families.js";
import { isObject } from "../plain-object.js";
import { PYTHON_WHITE_SPACE, trimAsService } from "../trim-as-service.js";
import type { PluginConfigInput } from "../wire-types.js";
import { FormBody, type FormValue, UploadedFile } from "./form-body.js";
import { requiredField, serverError, validationError } from "./http-error.js";
import type { ProfileBehaviour } from "./types.js";

type FieldRule =
  /** A primary key of another table (`plugin`): any integer, checked against what exists. */
  | { kind: "related"; nullable: boolean }
  /** 32 bits. */
  | { kind: "integer"; nullable: boolean }
  | { kind: "boolean"; nullable: boolean }
  | { kind: "string"; nullable: boolean; maxLength: number };

export const INT_MIN = -2_147_483_648;
export const INT_MAX = 2_147_483_647;

/** In the serializer's declaration order: the order in which fields are checked. */
const FIELD_RULES: Readonly<Record<WritableField, FieldRule>> = {
  plugin: { kind: "related", nullable: false },
  enabled: { kind: "boolean", nullable: false },
  order: { kind: "integer", nullable: false },
  name: { kind: "string", nullable: true, maxLength: 400 },
  description: { kind: "string", nullable: true, maxLength: 1000 },
  deleted: { kind: "boolean", nullable: false },
  match_action: { kind: "integer", nullable: true },
};

const FIELD_ORDER = Object.keys(FIELD_RULES) as WritableField[];

/** Without a default: a create must send them. */
const REQUIRED_FIELDS: readonly WritableField[] = ["plugin", "order"];

interface FieldValue {
  value: unknown;
  /** As sent, where a message quotes it (`Invalid pk "007"`). */
  sent: string;
}

// BooleanField's TRUE_VALUES, FALSE_VALUES and NULL_VALUES (the text ones).
const TRUE_TEXTS = new Set("t T y Y yes Yes YES true True TRUE on On ON 1".split(" "));
const FALSE_TEXTS = new Set("f F n N no No NO false False FALSE off Off OFF 0".split(" "));
const NULL_TEXTS = new Set(["null", "Null", "NULL", ""]);

/** IntegerField refuses longer text before converting it. */
const MAX_INTEGER_TEXT = 1000;
/** Python refuses to convert longer digit strings to int. */
const MAX_INT_DIGITS = 4300;

/** Of any script: Unicode encodes each script's 0-9 in a row. */
function digitValue(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  let zero = code;
  while (zero > 0 && /\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero -= 1;
  return (code - zero) % 10;
}

const PYTHON_ZERO_FRACTION = new RegExp(`\\.0*[${PYTHON_WHITE_SPACE}]*$`);
const PYTHON_INT_TEXT = new RegExp(
  `^[${PYTHON_WHITE_SPACE}]*([+-]?)(\\p{Nd}+(?:_\\p{Nd}+)*)[${PYTHON_WHITE_SPACE}]*$`,
  "u",
);

/**
 * Python's int() of a string. Beyond the safe integers only the sign matters (no id or 32-bit
 * column is that large), so the result is clamped there.
 */
function parsePythonInt(text: string): number | undefined {
  const match = PYTHON_INT_TEXT.exec(text);
  if (!match) return undefined;
  const digits = Array.from((match[2] ?? "").replaceAll("_", ""), (char) => String(digitValue(char))).join(
    "",
  );
  if (digits.length > MAX_INT_DIGITS) return undefined;
  const magnitude = BigInt(digits);
  const clamped =
    magnitude > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER + 1 : Number(magnitude);
  return match[1] === "-" && clamped !== 0 ? -clamped : clamped;
}

function convertText(field: WritableField, rule: FieldRule, text: string): unknown {
  switch (rule.kind) {
    case "string":
      return text;
    case "boolean":
      if (TRUE_TEXTS.has(text)) return true;
      if (FALSE_TEXTS.has(text)) return false;
      return rule.nullable && NULL_TEXTS.has(text) ? null : text;
    case "related":
      return parsePythonInt(text) ?? text;
    case "integer":
      if (text.length > MAX_INTEGER_TEXT)
        throw validationError("max_string_length", "String value too large.", field);
      // IntegerField drops a fraction of zeros first: "7.0" and "7." are 7.
      return parsePythonInt(text.replace(PYTHON_ZERO_FRACTION, "")) ?? text;
  }
}

/** The serializer's reading of an empty value: null, "", or (undefined) as if not sent. */
function readEmpty(field: WritableField, rule: FieldRule): FieldValue | undefined {
  if (rule.nullable) return { value: rule.kind === "string" ? "" : null, sent: "" };
  if (!REQUIRED_FIELDS.includes(field)) return undefined;
  // A primary key turns "" into null; other fields convert it, and fail.
  return { value: rule.kind === "related" ? null : "", sent: "" };
}

/**
 * Undefined when the serializer sees none. A create reads a missing boolean as false (an unticked
 * checkbox); an update (`partial`) leaves a field not sent alone.
 */
function readFormField(form: FormBody, field: WritableField, partial: boolean): FieldValue | undefined {
  const rule = FIELD_RULES[field];
  const sent: FormValue | undefined = form.value(field);
  if (sent === undefined) return !partial && rule.kind === "boolean" ? { value: false, sent: "" } : undefined;
  // A file is no text: left as it is, it fails the field's check.
  if (typeof sent !== "string") return { value: sent, sent: sent.fileName };
  if (sent === "") return readEmpty(field, rule);
  return { value: convertText(field, rule, sent), sent };
}

/** `config`: JSON text, from a form body only. */
export type RecordChanges = PluginConfigInput & { config?: string };

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

export function requireObjectBody(body: unknown): Record<string, unknown> {
  if (isObject(body)) return body;
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
 * `config` is read from a form body only (`_fix_formdata_config_json`): text that is not JSON fails
 * inside the service, a 500 after validation and before any write. Files `add_attachment[KEY]`
 * attach to KEY, text fields `remove_attachment[KEY]` detach it.
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

/** `rawBody`: a JSON value or (posthog-2024) a FormBody. `partial`: an update. */
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
