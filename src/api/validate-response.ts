// Checks response bodies against schemas/api/*.schema.json before anything trusts them, naming the
// first bad field. The build precompiles the validators; from source they compile at first use.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { formatJsonPath, parseJson } from "../files/read-json-file.js";
import { findPackageFile } from "../package-files.js";
import { asRecord } from "../plain-object.js";
import { precompiledValidator } from "../precompiled.js";
import type { ServiceErrorBody } from "../wire-types.js";
import {
  AJV_OPTIONS,
  type ResponseShape,
  type ResponseShapes,
  SCHEMA_FILES,
  SHARED_SCHEMA_FILES,
} from "./response-schemas.js";

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; problem: string };

// A literal specifier, so that the action's bundle holds it too. Only from source is the compiler imported.
const getValidators = await precompiledValidator(
  import("./validators.generated.js").then((validators) => ({
    validate: validators as Record<ResponseShape, ValidateFunction>,
  })),
  "the API response validators",
  import.meta.url,
  async () => {
    const { Ajv } = await import("ajv");
    return () => compileValidators(new Ajv(AJV_OPTIONS));
  },
);

export function validateResponse<S extends ResponseShape>(
  shape: S,
  value: unknown,
): ValidationResult<ResponseShapes[S]> {
  const validate = getValidators()[shape];
  if (!validate(value))
    return { ok: false, problem: describeFirstError(validate.errors ?? [], value, shape) };
  return { ok: true, value: normalize(shape, value) as ResponseShapes[S] };
}

/** Undefined when the body is not one (a proxy may answer instead). */
export function readServiceError(body: Buffer): ServiceErrorBody | undefined {
  const result = validateResponse("errorBody", parseBody(body));
  return result.ok ? result.value : undefined;
}

/** A JSON object with string type, code and detail. */
export function isServiceEnvelope(body: Buffer | string): boolean {
  const value = asRecord(parseBody(body));
  const named = (field: unknown) => typeof field === "string" && field !== "";
  return named(value?.type) && named(value?.code) && typeof value?.detail === "string";
}

/** Undefined when it is not JSON (a proxy's page, an empty body). */
function parseBody(body: Buffer | string): unknown {
  return parseJson(typeof body === "string" ? body : body.toString("utf8")).value;
}

/** Fills what the schemas let the service leave out, so callers see one shape. */
function normalize(shape: ResponseShape, value: unknown): unknown {
  const object = value as Record<string, unknown>;
  if (shape === "errorBody") {
    return {
      type: typeof object.type === "string" ? object.type : "",
      code: typeof object.code === "string" ? object.code : "",
      detail: object.detail,
      attr: typeof object.attr === "string" ? object.attr : null,
    };
  }
  if (shape.endsWith("Page")) {
    return { ...object, next: object.next ?? null, previous: object.previous ?? null };
  }
  return value;
}

/** From source only. */
function compileValidators(ajv: Ajv): Record<ResponseShape, ValidateFunction> {
  for (const file of [...SHARED_SCHEMA_FILES, ...Object.values(SCHEMA_FILES)]) {
    const path = findPackageFile(join("schemas", "api", file));
    ajv.addSchema(JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>);
  }
  const compiled = (file: string): ValidateFunction => {
    const validate = ajv.getSchema(file);
    if (!validate) throw new Error(`schema ${file} did not compile`);
    return validate;
  };
  return Object.fromEntries(
    Object.entries(SCHEMA_FILES).map(([shape, file]) => [shape, compiled(file)]),
  ) as Record<ResponseShape, ValidateFunction>;
}

function describeFirstError(errors: readonly ErrorObject[], value: unknown, shape: ResponseShape): string {
  const error = errors[0];
  if (!error) return "does not match its schema";
  const path = formatJsonPath(error.instancePath);
  if (error.keyword === "required" && typeof error.params.missingProperty === "string") {
    return `${formatJsonPath(`${error.instancePath}/${error.params.missingProperty}`)}: is missing`;
  }
  if (
    shape === "projectPage" &&
    /^\/results\/\d+\/id$/.test(error.instancePath) &&
    error.keyword === "pattern"
  ) {
    // A listed project id becomes a request path and a manifest key: say which one, exactly.
    const seen = JSON.stringify(valueAt(value, error.instancePath));
    return `${path}: ${seen} is not a plain project id (a positive integer); no request is made for it or for any project of this listing`;
  }
  const problem = describeUnsafeInteger(error, valueAt(value, error.instancePath)) ?? error.message;
  return `${path || "response"}: ${problem ?? "is invalid"}`;
}

/**
 * The schemas' integer bounds, said plainly. Past 2^53 - 1, JSON.parse has already rounded the
 * number, so the value seen is not the one sent and is not shown.
 */
function describeUnsafeInteger(error: ErrorObject, seen: unknown): string | undefined {
  const limit = error.params.limit;
  if (error.keyword === "maximum" && limit === Number.MAX_SAFE_INTEGER) {
    return `is larger than ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest integer a JSON number carries exactly; the service's value was rounded when read, so two records could show as one`;
  }
  if (error.keyword === "minimum" && limit === -Number.MAX_SAFE_INTEGER) {
    return `is smaller than -${Number.MAX_SAFE_INTEGER} (-(2^53 - 1)), beyond what a JSON number carries exactly`;
  }
  if (error.keyword === "minimum" && limit === 1) {
    return `must be a positive integer id, not ${String(seen)}`;
  }
  return undefined;
}

/** `pointer`: a JSON pointer such as `/results/3/id`. */
function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const raw of pointer.split("/").slice(1)) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[raw.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return current;
}
