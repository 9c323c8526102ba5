// Checks the plain manifest (plain-manifest.ts) against schemas/manifest.schema.json with ajv and
// turns each ajv error into a message at the offending key or value, saying how to fix it.

import type { ErrorObject } from "ajv";
import { isFamilyName } from "../families.js";
import { controlCharacterIn } from "../record-name.js";
import type { YamlProblem } from "./diagnostics.js";
import { getManifestValidator } from "./manifest-validator.js";
import {
  allowedKeysAt,
  type LocationIndex,
  type NodeLocation,
  type PlainManifest,
} from "./plain-manifest.js";
import { didYouMean } from "./suggest.js";

const MAX_SCHEMA_ERRORS = 500;

export function validateManifestSchema(plain: PlainManifest): { errors: YamlProblem[]; omitted: number } {
  const validate = getManifestValidator();
  if (validate(plain.value)) return { errors: [], omitted: 0 };
  const errors: YamlProblem[] = [];
  const seen = new Set<string>();
  // Describing is cheap, but not for a file of 50,000 unknown keys: the first errors are what a person reads.
  for (const error of (validate.errors ?? []).slice(0, MAX_SCHEMA_ERRORS)) {
    // Project ids are checked, with better messages, as the blocks are read (read-manifest-blocks.ts).
    if (error.propertyName !== undefined || error.keyword === "propertyNames") continue;
    const problem = describeAjvError(error, plain);
    // One message per value is enough (a URL that fails both `pattern` and `format`, say); keys and
    // missing keys each get their own.
    const perKey = error.keyword === "additionalProperties" || error.keyword === "required";
    const identity = perKey
      ? `${problem.position.line}:${problem.position.col}:${problem.message}`
      : error.instancePath;
    if (seen.has(identity)) continue;
    seen.add(identity);
    errors.push(problem);
  }
  return {
    errors,
    omitted: Math.max(0, (validate.errors?.length ?? 0) - MAX_SCHEMA_ERRORS),
  };
}

const FIELD_HINTS: Partial<Record<string, string>> = {
  version: "add `version: 1`",
  name: "add `name: ...`, unique within the family",
  plugin: "add `plugin: <id>` with the id of the plugin to run",
  configs: "add `configs:` with the list of configs (`configs: []` for none)",
};

function describeAjvError(error: ErrorObject, plain: PlainManifest): YamlProblem {
  const path = parsePointer(error.instancePath, plain.value);
  const location = nearestLocation(plain.locations, path);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") {
    const key = String(params.additionalProperty);
    return {
      position: plain.locations.lookup([...path, key])?.key ?? location.value,
      message: describeUnknownKey(key, path),
    };
  }
  return { position: location.value, message: describeValueError(error, path, plain.value, params) };
}

function describeValueError(
  error: ErrorObject,
  path: readonly (string | number)[],
  root: unknown,
  params: Record<string, unknown>,
): string {
  const field = path.at(-1);
  const label = describeField(path, root);
  const actual = valueAt(root, path);
  switch (error.keyword) {
    case "required": {
      const missing = String(params.missingProperty);
      const hint = FIELD_HINTS[missing];
      const where = path.length === 0 ? "at the top of the manifest" : `in ${label}`;
      return `missing required key "${missing}" ${where}${hint === undefined ? "" : `; ${hint}`}`;
    }
    case "type": {
      const expected = String(params.type);
      const wanted = expected
        .split(",")
        .map((type) => TYPE_WORDS[type] ?? type)
        .join(" or ");
      return `${label} must be ${wanted}, got ${describeValue(actual)}${typeHint(expected, actual, field)}`;
    }
    case "const":
      return `${label} must be ${JSON.stringify(params.allowedValue)}, got ${describeValue(actual)}; this pcsync reads manifest version 1`;
    case "minimum":
      return `${label} must be ${String(params.limit)} or more, got ${describeValue(actual)}${field === "id" ? " (record ids start at 1)" : ""}`;
    case "maximum":
      return `${label} must be at most ${String(params.limit)}, got ${describeValue(actual)}`;
    case "maxLength":
      return `${label} is ${typeof actual === "string" ? [...actual].length : "too many"} characters long; the service accepts at most ${String(params.limit)}, shorten it`;
    case "minLength":
      return `${label} must not be empty`;
    case "pattern": {
      // A wave's name is a short label; a config's may be any one line of printable text.
      if (field === "name" && path.at(-3) === "waves")
        return `${label} must be 1 to 40 letters, digits, spaces, _, . or -, starting with a letter or a digit (such as canary), got ${describeValue(actual)}`;
      const control = field === "name" && typeof actual === "string" ? controlCharacterIn(actual) : undefined;
      if (control !== undefined)
        return `${label} contains a control character (${control}); names are one line of printable text`;
      if (field === "base_url")
        return `${label} must start with http:// or https://, got ${describeValue(actual)}`;
      if (typeof field === "string" && field.endsWith("_env"))
        return `${label} is the name of an environment variable (letters, digits and _, not starting with a digit, no $), got ${describeValue(actual)}`;
      if (field === "username") return `${label} cannot hold a colon, got ${describeValue(actual)}`;
      if (field === "bake")
        return `${label} must be a duration such as 30s, 10m, 1h or 1h30m, got ${describeValue(actual)}`;
      return `${label} has an invalid format: ${describeValue(actual)}`;
    }
    case "enum": {
      // A value outside a fixed list (`fields: al`, `ignore_fields: [enabeld]`): the list, and a close one.
      const allowed = (params.allowedValues as unknown[]).map(String);
      const inList = typeof field === "number";
      const written = `"${String(inList ? path.at(-2) : field)}"${inList ? " entry" : ""} ${describeValue(actual)}`;
      const suggestion = typeof actual === "string" ? didYouMean(actual, allowed) : "";
      return `${written} is not one of ${allowed.map((value) => `"${value}"`).join(", ")}${suggestion}`;
    }
    case "uniqueItems":
      return `${label} lists ${describeValue(valueAt(root, [...path, Number(params.j)]))} twice; keep one`;
    case "format":
      return `${label} is not a valid URL: ${describeValue(actual)}; write it like https://app.example.com`;
    default:
      return `${label} ${error.message ?? "is invalid"}`;
  }
}

function describeUnknownKey(key: string, path: readonly (string | number)[]): string {
  const parent = path.at(-1);
  const isConfig = typeof parent === "number" && path.at(-2) === "configs";
  if (key === "id" && isConfig && path[0] === "templates") {
    return "id: is refused in a template: a record id belongs to one project; pin it in that project's `overrides: {NAME: {id: ...}}`";
  }
  const allowed = allowedKeysAt(path);
  const isProject = path.length === 2 && (path[0] === "projects" || path[0] === "templates");
  const noun = isProject ? "family" : "key";
  const suggestion = didYouMean(key, allowed);
  if (suggestion !== "") return `unknown ${noun} "${key}"${suggestion}`;
  const list = (isProject ? allowed.filter((name) => name !== "use") : allowed)
    .map((name) => `"${name}"`)
    .join(", ");
  return `unknown ${noun} "${key}"; ${isProject ? "the families are" : "allowed here"}: ${list}`;
}

/** How to write what was meant, for the usual slips (a number or yes/no where text goes, and back). */
function typeHint(expected: string, actual: unknown, field: string | number | undefined): string {
  const key = typeof field === "string" ? field : undefined;
  if (expected.includes("boolean") && typeof actual === "string") {
    if (/^(true|false)$/i.test(actual.trim())) return `; write ${actual.trim().toLowerCase()} without quotes`;
    if (/^(yes|no|on|off|y|n)$/i.test(actual))
      return "; write true or false, without quotes (YAML 1.2 reads yes, no, on and off as text)";
  }
  if (expected.includes("integer") && typeof actual === "string" && /^\s*[+-]?\d+\s*$/.test(actual)) {
    return "; remove the quotes";
  }
  if (expected.includes("integer") && typeof actual === "number")
    return field === "id" || field === "order" ? "; ids and orders are whole numbers" : "";
  // `bake: 10`: a number where a duration goes; quoted, it would still lack its unit.
  if (field === "bake" && typeof actual === "number")
    return `; a duration has a unit: bake: ${actual}s (or ${actual}m, ${actual}h)`;
  // `description: 42` or `name: true`: YAML read a number or a boolean, where text was meant.
  if (expected.includes("string") && (typeof actual === "number" || typeof actual === "boolean")) {
    // A list entry has no key to write before it.
    const written = typeof field === "number" ? "" : `${key ?? "key"}: `;
    return `; if it is meant as text, quote it: ${written}"${String(actual)}"`;
  }
  if (expected === "object" && actual === null) return "; it is empty: give its keys, indented below it";
  if (expected === "object" && Array.isArray(actual) && key !== undefined && isFamilyName(key)) {
    return `; put the list under \`configs:\`: indent \`configs:\` below ${key}:, and the \`- name:\` items below configs:`;
  }
  if (expected === "array" && typeof actual === "string" && key !== undefined) {
    return `; write it as a list: ${key}: [${actual}]`;
  }
  return "";
}

const TYPE_WORDS: Partial<Record<string, string>> = {
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  string: "text",
  null: "null",
  object: "a mapping of keys to values",
  array: "a list (`- item` lines)",
};

/** An item of any other list is an entry. */
const LIST_ITEM_NOUNS: Partial<Record<string, string>> = {
  configs: "config",
  waves: "wave",
  project_sets: "project set",
};

function describeField(path: readonly (string | number)[], root: unknown): string {
  const last = path.at(-1);
  if (last === undefined) return "the manifest";
  if (typeof last === "number") {
    const name = valueAt(root, [...path, "name"]);
    const list = path.at(-2);
    const noun = LIST_ITEM_NOUNS[String(list)];
    if (noun === undefined) return `"${String(list)}" entry #${last + 1}`;
    if (typeof name === "string") return `${noun} "${name}"`;
    return list === "configs" ? `config #${last + 1} of ${String(path.at(-3))}` : `${noun} #${last + 1}`;
  }
  if (path.length === 2 && path[0] === "projects") return `project "${last}"`;
  return `"${last}"`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "nothing (null)";
  if (typeof value === "string") {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return `text ${JSON.stringify(shown)}`;
  }
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

/** A segment is a number only where it steps into a list: a project id under `projects:` stays text. */
function parsePointer(pointer: string, root: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    path.push(Array.isArray(valueAt(root, path)) && /^\d+$/.test(segment) ? Number(segment) : segment);
  }
  return path;
}

function nearestLocation(locations: LocationIndex, path: readonly (string | number)[]): NodeLocation {
  for (let length = path.length; length >= 0; length--) {
    const found = locations.lookup(path.slice(0, length));
    if (found !== undefined) return found;
  }
  return { value: { line: 1, col: 1 } };
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current = root;
  for (const segment of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = Object.getOwnPropertyDescriptor(current, String(segment))?.value;
  }
  return current;
}
