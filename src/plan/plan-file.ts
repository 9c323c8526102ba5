// The plan as a JSON document: written by `plan --format json` and `plan --out`, read back by
// `apply --plan`, which must not act on a damaged, foreign or hand-broken file.

import type { ErrorObject, ValidateFunction } from "ajv";
import { describeError } from "../errors.js";
import { InputError } from "../input-error.js";
import { locateSecrets, type SecretRegistry, type ValuePath } from "../redact.js";
import { neutraliseJson } from "../server-text.js";
import type { Plan } from "./types.js";

export const PLAN_FORMAT = "pcsync-plan";
export const PLAN_VERSION = 1;

/** The plan document: pretty JSON, one trailing newline. A create's `from` is left out. */
/** The plan document; the characters a terminal or CI runner could act on are JSON escapes. */
export function serializePlan(plan: Plan): string {
  return `${neutraliseJson(JSON.stringify(plan, null, 2))}\n`;
}

/**
 * Where a plan holds the text of a registered secret (the API key), in words a user can find the
 * record by (project, family, record id, field), never showing the value itself: a plan document
 * must round-trip, so it is refused rather than redacted.
 */
export function locateSecretsInPlan(plan: Plan, secrets: SecretRegistry): string[] {
  const fieldsByPlace = new Map<string, Set<string>>();
  for (const path of locateSecrets(plan, secrets)) {
    const [place, field] = describePlanPath(plan, path);
    fieldsByPlace.set(place, (fieldsByPlace.get(place) ?? new Set()).add(field));
  }
  return [...fieldsByPlace].map(([place, fields]) =>
    fields.has("") ? place : `${place}, ${fields.size === 1 ? "field" : "fields"} ${[...fields].join(", ")}`,
  );
}

/** The record (or part of the plan) a path is in, and the field; "" when there is no field. */
function describePlanPath(plan: Plan, path: ValuePath): [string, string] {
  const [section, index, ...rest] = path;
  if (section === "changes" && typeof index === "number") {
    const change = plan.changes[index];
    if (change) {
      const record = change.id === null ? `the config to create (${change.source})` : `record ${change.id}`;
      const field =
        rest[0] === "fields" && typeof rest[1] === "string"
          ? `${rest[1]} (${rest[2] === "from" ? "current" : "new"} value)`
          : String(rest[0]);
      return [`project ${change.project} ${change.family} ${record}`, field];
    }
  }
  if (section === "reorders" && typeof index === "number" && rest[0] === "moves") {
    const reorder = plan.reorders[index];
    const move = typeof rest[1] === "number" ? reorder?.moves[rest[1]] : undefined;
    if (reorder && move)
      return [`project ${reorder.project} ${reorder.family} record ${move.id}`, String(rest[2])];
  }
  if (section === "families" && typeof index === "number" && rest[0] === "unmanaged") {
    const family = plan.families[index];
    const record = typeof rest[1] === "number" ? family?.unmanaged[rest[1]] : undefined;
    if (family && record) {
      return [`project ${family.project} ${family.family} record ${record.id} (unmanaged)`, String(rest[2])];
    }
  }
  if (section === "guards" && typeof index === "number") {
    const guard = plan.guards[index];
    if (guard) return [`project ${guard.project} ${guard.family}, a safety guard's message`, ""];
  }
  if (section === "server") return ["the server's base URL", ""];
  const pointer = path.map((segment) => `/${String(segment).replace(/~/g, "~0").replace(/\//g, "~1")}`);
  return [`the plan's ${formatPath(pointer.join(""))}`, ""];
}

/**
 * Reads a plan document, validated by `validate` (plan-validator.ts: schemas/plan.schema.json,
 * handed in so that what only writes plans never loads it); `fileName` names it in errors.
 */
export function parsePlanFile(text: string, fileName: string, validate: ValidateFunction<Plan>): Plan {
  const redo = `Save a fresh one with \`pcsync plan --out ${fileName}\`.`;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const reason = describeError(error);
    throw new InputError("plan_file_invalid", {
      file: fileName,
      problem: `is not a pcsync plan: it is not valid JSON (${reason}). ${redo}`,
    });
  }
  if (!isObject(data) || data.format !== PLAN_FORMAT) {
    throw new InputError("plan_file_invalid", {
      file: fileName,
      problem: `is not a pcsync plan: it has no "format": "${PLAN_FORMAT}". ${redo}`,
    });
  }
  if (data.version !== PLAN_VERSION) {
    throw new InputError("plan_file_invalid", {
      file: fileName,
      problem: `is a version ${JSON.stringify(data.version)} plan; this pcsync reads version ${PLAN_VERSION} plans only. Plan again with this pcsync: \`pcsync plan --out ${fileName}\`.`,
    });
  }
  if (!validate(data)) {
    const problem = describeSchemaErrors(validate.errors ?? []);
    throw new InputError("plan_file_invalid", {
      file: fileName,
      problem: `is not a valid pcsync plan: ${problem}. ${redo}`,
    });
  }
  checkSummary(data, fileName, redo);
  restoreAbsentFrom(data);
  return data;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A summary that disagrees with the changes means the file was edited or cut; apply must not guess. */
function checkSummary(plan: Plan, fileName: string, redo: string): void {
  const counted = {
    create: plan.changes.filter((change) => change.action === "create").length,
    update: plan.changes.filter((change) => change.action === "update").length,
    delete: plan.changes.filter((change) => change.action === "delete").length,
    reorder: plan.reorders.reduce((total, reorder) => total + reorder.moves.length, 0),
  };
  for (const key of ["create", "update", "delete", "reorder"] as const) {
    if (plan.summary[key] !== counted[key]) {
      throw new InputError("plan_file_invalid", {
        file: fileName,
        problem: `is not a valid pcsync plan: summary.${key} is ${plan.summary[key]} but the plan holds ${counted[key]}. ${redo}`,
      });
    }
  }
}

/** JSON drops `from: undefined`; put the key back so the result is the Plan that was saved. */
function restoreAbsentFrom(plan: Plan): void {
  for (const change of plan.changes) {
    for (const fieldChange of Object.values(change.fields)) {
      if (!Object.hasOwn(fieldChange, "from")) fieldChange.from = undefined;
    }
  }
}

/**
 * The first schema error in words, at a path a user can find in the file
 * (`changes[3].fields.plugin.to`). The alternatives of a union (`integer or null`) are merged.
 */
function describeSchemaErrors(errors: readonly ErrorObject[]): string {
  const [first] = errors;
  if (!first) return "it does not match the plan schema";
  const path = formatPath(first.instancePath);
  if (first.keyword === "type") {
    const types = errors
      .filter((error) => error.keyword === "type" && error.instancePath === first.instancePath)
      .flatMap((error) => String(error.params.type).split(","));
    return `${path} must be ${[...new Set(types)].join(" or ")}`;
  }
  return describeSchemaError(first, path);
}

function describeSchemaError(error: ErrorObject, path: string): string {
  const params: Record<string, unknown> = error.params;
  if (error.propertyName !== undefined)
    return `${path} has an unknown key ${JSON.stringify(error.propertyName)}`;
  switch (error.keyword) {
    case "required":
      return `${path} lacks the required property ${JSON.stringify(params.missingProperty)}`;
    case "additionalProperties":
      return `${path} has an unknown property ${JSON.stringify(params.additionalProperty)}`;
    case "enum":
      return `${path} must be one of ${(Array.isArray(params.allowedValues) ? params.allowedValues : []).map((value) => JSON.stringify(value)).join(", ")}`;
    case "const":
      return `${path} must be ${JSON.stringify(params.allowedValue)}`;
    case "false schema":
      return `${path} is not allowed here`;
    case "maxProperties":
      return params.limit === 0 ? `${path} must be empty` : `${path} ${error.message ?? "is invalid"}`;
    case "minProperties":
      return params.limit === 1 ? `${path} must not be empty` : `${path} ${error.message ?? "is invalid"}`;
    default: {
      // With `verbose`, the failing schema's description says in words what the keyword checks.
      const schema: unknown = error.parentSchema;
      const description =
        isObject(schema) && typeof schema.description === "string"
          ? ` (${schema.description.replace(/\.$/, "")})`
          : "";
      return `${path} ${error.message ?? "is invalid"}${description}`;
    }
  }
}

function formatPath(pointer: string): string {
  if (pointer === "") return "the plan";
  return pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((path, segment, index) => {
      if (/^[0-9]+$/.test(segment)) return `${path}[${segment}]`;
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) return index === 0 ? segment : `${path}.${segment}`;
      return `${path}[${JSON.stringify(segment)}]`;
    }, "");
}
