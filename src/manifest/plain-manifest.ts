// The manifest as plain data for ajv, with an index from JSON pointer to where each value was
// written. Interpolated values are typed by what the schema expects there, so
// `plugin: ${PLUGIN_ID}` becomes an integer.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";
import type { Position } from "./diagnostics.js";
import type { ValueNode } from "./load-yaml.js";

/** Where a value of the plain manifest was written, by JSON pointer (as in ajv's instancePath). */
export interface NodeLocation {
  /** The key naming this value, when it is a map entry. */
  key?: Position;
  /** The value itself (for a map or list, where it starts). */
  value: Position;
}

export type LocationIndex = Map<string, NodeLocation>;

export interface PlainManifest {
  /** The manifest as plain data, interpolated values typed; not yet validated. */
  value: unknown;
  locations: LocationIndex;
}

type JsonSchema = { [keyword: string]: unknown };

const SCHEMA_FILE = join("schemas", "manifest.schema.json");

let schemaCache: JsonSchema | undefined;

/** The manifest schema, found by walking up from this module (it ships at the package root). */
export function loadManifestSchema(): JsonSchema {
  if (schemaCache !== undefined) return schemaCache;
  schemaCache = JSON.parse(readFileSync(findPackageFile(SCHEMA_FILE), "utf8")) as JsonSchema;
  return schemaCache;
}

export function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function pointerOf(path: readonly (string | number)[]): string {
  return path.map((segment) => `/${escapePointerSegment(String(segment))}`).join("");
}

/** Builds the plain value ajv checks, and the index from JSON pointer to source position. */
export function toPlainManifest(root: ValueNode): PlainManifest {
  const schema = loadManifestSchema();
  const locations: LocationIndex = new Map();

  const visit = (node: ValueNode, path: (string | number)[], keyPosition: Position | undefined): unknown => {
    const pointer = pointerOf(path);
    if (node.kind === "scalar") {
      locations.set(pointer, withKey({ value: node.span.position }, keyPosition));
      return node.interpolated === true
        ? coerceInterpolated(node.value, schemaTypesAt(schema, path))
        : node.value;
    }
    if (node.kind === "seq") {
      locations.set(pointer, withKey({ value: node.position }, keyPosition));
      return node.items.map((item, index) => visit(item, [...path, index], undefined));
    }
    locations.set(pointer, withKey({ value: node.position }, keyPosition));
    const object: Record<string, unknown> = {};
    for (const entry of node.entries) {
      // defineProperty: a key named "__proto__" must stay a key, not replace the prototype.
      Object.defineProperty(object, entry.key, {
        value: visit(entry.value, [...path, entry.key], entry.keySpan.position),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return object;
  };

  return { value: visit(root, [], undefined), locations };
}

function withKey(location: NodeLocation, key: Position | undefined): NodeLocation {
  return key === undefined ? location : { ...location, key };
}

// ---- what the schema expects at a path ------------------------------------------------------

/** The schemas that apply at a path, following $ref and allOf. */
function schemasAt(schema: JsonSchema, path: readonly (string | number)[]): JsonSchema[] {
  let current = expand(schema, schema);
  for (const segment of path) {
    const next: JsonSchema[] = [];
    for (const candidate of current) {
      const properties = asSchema(candidate.properties);
      const property =
        typeof segment === "string" && properties !== undefined ? asSchema(properties[segment]) : undefined;
      if (property !== undefined) next.push(property);
      else if (typeof segment === "string" && asSchema(candidate.additionalProperties) !== undefined) {
        next.push(asSchema(candidate.additionalProperties) as JsonSchema);
      } else if (typeof segment === "number" && asSchema(candidate.items) !== undefined) {
        next.push(asSchema(candidate.items) as JsonSchema);
      }
    }
    current = next.flatMap((candidate) => expand(schema, candidate));
  }
  return current;
}

function expand(root: JsonSchema, schema: JsonSchema): JsonSchema[] {
  const result = [schema];
  const reference = schema.$ref;
  if (typeof reference === "string" && reference.startsWith("#/")) {
    // Any local pointer (a template's field refers to `#/definitions/config/properties/plugin`).
    let target: JsonSchema | undefined = root;
    for (const segment of reference.slice(2).split("/")) target = asSchema(target?.[segment]);
    if (target !== undefined) result.push(...expand(root, target));
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      const partSchema = asSchema(part);
      if (partSchema !== undefined) result.push(...expand(root, partSchema));
    }
  }
  return result;
}

function asSchema(value: unknown): JsonSchema | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonSchema)
    : undefined;
}

function schemaTypesAt(schema: JsonSchema, path: readonly (string | number)[]): Set<string> {
  const types = new Set<string>();
  for (const candidate of schemasAt(schema, path)) {
    const type = candidate.type;
    if (typeof type === "string") types.add(type);
    if (Array.isArray(type)) for (const each of type) if (typeof each === "string") types.add(each);
    if (typeof candidate.const === "number") types.add("integer");
  }
  return types;
}

/** The keys the schema allows in the mapping at `path`. */
export function allowedKeysAt(path: readonly (string | number)[]): string[] {
  const schema = loadManifestSchema();
  const keys = new Set<string>();
  for (const candidate of schemasAt(schema, path)) {
    const properties = asSchema(candidate.properties);
    if (properties !== undefined) for (const key of Object.keys(properties)) keys.add(key);
  }
  return [...keys];
}

/** Gives an interpolated string the type the schema wants here; text stays text where text is allowed. */
function coerceInterpolated(value: unknown, types: ReadonlySet<string>): unknown {
  if (typeof value !== "string" || types.size === 0 || types.has("string")) return value;
  const trimmed = value.trim();
  if ((types.has("integer") || types.has("number")) && /^[+-]?\d+$/.test(trimmed)) {
    const number = Number(trimmed);
    if (Number.isSafeInteger(number)) return number;
  }
  if (types.has("number") && trimmed !== "" && Number.isFinite(Number(trimmed))) return Number(trimmed);
  if (types.has("boolean") && (trimmed === "true" || trimmed === "false")) return trimmed === "true";
  if (types.has("null") && (trimmed === "" || trimmed === "null" || trimmed === "~")) return null;
  return value;
}
