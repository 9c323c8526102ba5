// What the real serializer (Django REST framework) makes of a field of a form body, where every
// value is text: a missing checkbox is false on create, "" means null or nothing, "yes" and "on"
// are true, "7.0" is 7. The result is the value a JSON body would have carried, so one check
// (validation.ts) serves both; text no rule can convert stays text, and fails that check with
// the message the serializer gives.

import type { WritableField } from "../families.js";
import { PYTHON_WHITE_SPACE } from "../trim-as-service.js";
import { FIELD_RULES, type FieldRule, REQUIRED_FIELDS } from "./field-rules.js";
import type { FormBody, FormValue } from "./form-body.js";
import { validationError } from "./http-error.js";

export interface FieldValue {
  value: unknown;
  /** The value as sent, where a message quotes it (`Invalid pk "007"`). */
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

/** The value of a decimal digit of any script: Unicode encodes each script's 0-9 in a row. */
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
 * Python's int() of a string: surrounding whitespace, a sign, decimal digits of any script with
 * single underscores between them. Beyond the safe integers, only the sign matters (no id or
 * 32-bit column is that large), so the result is clamped there.
 */
export function parsePythonInt(text: string): number | undefined {
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
 * The value of `field`, or undefined when the serializer sees none. `partial` is an update: a field
 * not sent is left alone, where a create reads a missing boolean as false (an unticked checkbox).
 */
export function readFormField(
  form: FormBody,
  field: WritableField,
  partial: boolean,
): FieldValue | undefined {
  const rule = FIELD_RULES[field];
  const sent: FormValue | undefined = form.value(field);
  if (sent === undefined) return !partial && rule.kind === "boolean" ? { value: false, sent: "" } : undefined;
  // A file is no text: left as it is, it fails the field's check.
  if (typeof sent !== "string") return { value: sent, sent: sent.fileName };
  if (sent === "") return readEmpty(field, rule);
  return { value: convertText(field, rule, sent), sent };
}
