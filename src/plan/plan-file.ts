// The plan as a JSON document: written by `plan --format json` and `plan --out`, read back by
// `apply --plan`, which must not act on a damaged, foreign or hand-broken file.

import type { ValidateFunction } from "ajv";
import { refuseOtherKind } from "../files/pcsync-file-kind.js";
import { formatJsonPath, parseJson, readBoundedText, validateJson } from "../files/read-json-file.js";
import { formatBytes } from "../format-bytes.js";
import { InputError } from "../input-error.js";
import { neutraliseJson } from "../neutralise-server-text.js";
import { isObject } from "../plain-object.js";
import { locateSecrets, type SecretRegistry, type ValuePath } from "../redact.js";
import type { Plan, PlannedChange, PlannedReorder, PlanSummary } from "./types.js";

export const PLAN_FORMAT = "pcsync-plan";
export const PLAN_VERSION = 2;

export function hasChanges(plan: Pick<Plan, "changes" | "reorders">): boolean {
  return plan.changes.length > 0 || plan.reorders.length > 0;
}

export function summarizePlan(
  changes: readonly PlannedChange[],
  reorders: readonly PlannedReorder[],
): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, reorder: 0 };
  for (const change of changes) summary[change.action] += 1;
  for (const reorder of reorders) summary.reorder += reorder.moves.length;
  return summary;
}

/** A create's `from` is left out; characters a terminal or CI runner could act on become JSON escapes. */
export function serializePlan(plan: Plan): string {
  return `${neutraliseJson(JSON.stringify(plan, null, 2))}\n`;
}

/** Where a plan holds a registered secret, never showing it: a plan must round-trip, so it is refused, not redacted. */
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

/** The record (or part of the plan) a path is in, and the field ("" for none). */
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
  return [`the plan's ${formatJsonPath(pointer.join("")) || "document"}`, ""];
}

/** The largest saved plan read: a plan of 20,000 changes is a few MB; this stops a file that is none. */
export const MAX_PLAN_FILE_BYTES = 256 * 1024 * 1024;

/** `validate` is handed in so that what only writes plans never loads the schema. */
export async function readPlanFile(
  path: string,
  cwd: string,
  validate: ValidateFunction<Plan>,
): Promise<Plan> {
  const read = await readBoundedText(path, cwd, MAX_PLAN_FILE_BYTES);
  if (read.problem !== undefined) {
    const reason =
      read.problem.kind === "missing"
        ? "no such file; check the path, or save a plan with `pcsync plan --out FILE`"
        : read.problem.kind === "too_large"
          ? `it is over the ${formatBytes(read.problem.maxBytes)} limit for a saved plan, so it is not one`
          : read.problem.reason;
    throw new InputError("plan_file_unreadable", { file: path, reason });
  }
  return parsePlanFile(read.value, path, validate);
}

export function parsePlanFile(text: string, fileName: string, validate: ValidateFunction<Plan>): Plan {
  const redo = `Save a fresh one with \`pcsync plan --out ${fileName}\`.`;
  const invalid = (problem: string) => new InputError("plan_file_invalid", { file: fileName, problem });
  refuseOtherKind(text, fileName, "plan");
  const parsed = parseJson(text);
  if (parsed.problem !== undefined)
    throw invalid(`is not a pcsync plan: it is not valid JSON (${parsed.problem.message}). ${redo}`);
  const data = parsed.value;
  if (!isObject(data) || data.format !== PLAN_FORMAT)
    throw invalid(`is not a pcsync plan: it has no "format": "${PLAN_FORMAT}". ${redo}`);
  if (data.version !== PLAN_VERSION) {
    throw invalid(
      `is a version ${JSON.stringify(data.version)} plan${typeof data.version === "number" && data.version < PLAN_VERSION ? ", made by an older pcsync" : ""}; this pcsync reads version ${PLAN_VERSION} plans only. Plan again with this pcsync: \`pcsync plan --out ${fileName}\`.`,
    );
  }
  const checked = validateJson(data, validate, "the plan");
  if (checked.problem !== undefined)
    throw invalid(`is not a valid pcsync plan: ${checked.problem.message}. ${redo}`);
  const plan = checked.value;
  // A summary that disagrees with the changes means the file was edited or cut; apply must not guess.
  const counted = summarizePlan(plan.changes, plan.reorders);
  for (const key of ["create", "update", "delete", "reorder"] as const) {
    if (plan.summary[key] !== counted[key])
      throw invalid(
        `is not a valid pcsync plan: summary.${key} is ${plan.summary[key]} but the plan holds ${counted[key]}. ${redo}`,
      );
  }
  restoreAbsentFrom(plan);
  return plan;
}

/** JSON drops `from: undefined`; put the key back so the result is the Plan that was saved. */
function restoreAbsentFrom(plan: Plan): void {
  for (const change of plan.changes) {
    for (const fieldChange of Object.values(change.fields)) {
      if (!Object.hasOwn(fieldChange, "from")) fieldChange.from = undefined;
    }
  }
}
