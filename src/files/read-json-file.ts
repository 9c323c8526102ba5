// The one way pcsync reads a file that may have been copied, cut or edited (a saved plan, a journal):
// at most so many bytes, parsed, then checked with its schema's precompiled validator.

import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import type { ErrorObject, ValidateFunction } from "ajv";
import { isObject } from "../plain-object.js";

export type FileReadProblem =
  | { kind: "missing" }
  | { kind: "too_large"; maxBytes: number }
  | { kind: "unreadable"; reason: string; code?: string | undefined };

interface JsonProblem {
  kind: "not_json" | "schema";
  /** The parser's reason, or the first schema error (`changes[3].id must be integer`). */
  message: string;
  /** `changes[3].id`; "" for the document itself or for bad JSON. */
  path: string;
}

export type Checked<T, Problem> = { value: T; problem?: undefined } | { value?: undefined; problem: Problem };

/** A file may be a pipe or a device (`<(command)`): one that is no document of ours stops at the limit. */
export async function readBoundedBytes(
  absolute: string,
  maxBytes: number,
): Promise<Checked<Buffer, FileReadProblem>> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of createReadStream(absolute, { highWaterMark: 64 * 1024 })) {
      const buffer = chunk as Buffer;
      size += buffer.length;
      if (size > maxBytes) return { problem: { kind: "too_large", maxBytes } };
      chunks.push(buffer);
    }
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === "ENOENT") return { problem: { kind: "missing" } };
    return { problem: { kind: "unreadable", reason: message, code } };
  }
  return { value: Buffer.concat(chunks) };
}

export async function readBoundedText(
  path: string,
  cwd: string,
  maxBytes: number,
): Promise<Checked<string, FileReadProblem>> {
  const read = await readBoundedBytes(resolve(cwd, path), maxBytes);
  return read.problem === undefined ? { value: read.value.toString("utf8") } : read;
}

export function parseJson(text: string): Checked<unknown, JsonProblem> {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { problem: { kind: "not_json", message: (error as Error).message, path: "" } };
  }
}

/** `root` names the document itself (`the plan`). */
export function validateJson<T>(
  value: unknown,
  validate: ValidateFunction<T>,
  root: string,
): Checked<T, JsonProblem> {
  if (validate(value)) return { value };
  return { problem: describeSchemaErrors(validate.errors ?? [], root) };
}

/** The first error, at a path a user can find in the file; a union's alternatives are merged. */
export function describeSchemaErrors(errors: readonly ErrorObject[], root: string): JsonProblem {
  const [first] = errors;
  if (!first) return { kind: "schema", message: `${root} does not match its schema`, path: "" };
  const path = formatJsonPath(first.instancePath);
  const shown = path === "" ? root : path;
  if (first.keyword === "type") {
    const types = errors
      .filter((error) => error.keyword === "type" && error.instancePath === first.instancePath)
      .flatMap((error) => String(error.params.type).split(","));
    return { kind: "schema", message: `${shown} must be ${[...new Set(types)].join(" or ")}`, path };
  }
  return { kind: "schema", message: describeSchemaError(first, shown), path };
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

/** `/changes/3/fields/plugin` → `changes[3].fields.plugin`. */
export function formatJsonPath(pointer: string): string {
  if (pointer === "") return "";
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
