// The manifest as plain data for ajv, with an index from JSON pointer to where each value was
// written. Interpolated values are typed by what the schema expects there, so
// `plugin: ${PLUGIN_ID}` becomes an integer.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";
import type { Position } from "./diagnostics.js";
import { type LocationIndex, NodePlacesBuilder } from "./node-places.js";
import type { ValueNode } from "./yaml-nodes.js";

export type { LocationIndex, NodeLocation } from "./node-places.js";
export { unescapePointerSegment } from "./node-places.js";

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
  if (!segment.includes("~") && !segment.includes("/")) return segment;
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Builds the plain value ajv checks, and the index from JSON pointer to source position, which
 * keeps nothing of the tree (`positionAt` maps the tree's offsets to positions: the parse's).
 */
export function toPlainManifest(root: ValueNode, positionAt: (offset: number) => Position): PlainManifest {
  const schema = loadManifestSchema();
  // The path of the node being visited: only an interpolated value needs it (for its schema type).
  const path: (string | number)[] = [];
  // The schema's types at a path depend on which keys it names, not on which list indexes: one
  // walk of the schema per shape of path, not per interpolated value.
  const typesByShape = new Map<string, Set<string>>();
  const typesHere = (): Set<string> => {
    const shape = JSON.stringify(path.map((segment) => (typeof segment === "number" ? 0 : segment)));
    let types = typesByShape.get(shape);
    if (types === undefined) {
      types = schemaTypesAt(schema, path);
      typesByShape.set(shape, types);
    }
    return types;
  };

  const places = NodePlacesBuilder.forTree(root);
  const visit = (node: ValueNode, key: string | undefined, keyOffset: number): unknown => {
    const place = places.open(node.kind, node.offset, key, keyOffset);
    const value = plainValueOf(node);
    places.close(place);
    return value;
  };
  const plainValueOf = (node: ValueNode): unknown => {
    if (node.kind === "scalar") {
      return node.interpolated === true ? coerceInterpolated(node.value, typesHere()) : node.value;
    }
    if (node.kind === "seq") {
      const items: unknown[] = new Array(node.items.length);
      for (let index = 0; index < node.items.length; index++) {
        path.push(index);
        items[index] = visit(node.items[index] as ValueNode, undefined, 0);
        path.pop();
      }
      return items;
    }
    const object: Record<string, unknown> = {};
    for (const entry of node.entries) {
      path.push(entry.key);
      const value = visit(entry.value, entry.key, entry.keyOffset);
      path.pop();
      setKey(object, entry.key, value);
    }
    return object;
  };

  const value = visit(root, undefined, 0);
  return { value, locations: places.finish(positionAt) };
}

/** Sets `key` of a plain map: a key named "__proto__" stays a key, it does not replace the prototype. */
export function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  } else object[key] = value;
}

// ---- what the schema expects at a path ------------------------------------------------------

/** The schemas that apply at a path, following $ref and allOf. */
function schemasAt(schema: JsonSchema, path: readonly (string | number)[]): JsonSchema[] {
  let current = expand(schema, schema);
  for (const segment of path) {
    const next: JsonSchema[] = [];
    for (const candidate of current) {
      const properties = asRecord(candidate.properties);
      const property =
        typeof segment === "string" && properties !== undefined ? asRecord(properties[segment]) : undefined;
      if (property !== undefined) next.push(property);
      else if (typeof segment === "string" && asRecord(candidate.additionalProperties) !== undefined) {
        next.push(asRecord(candidate.additionalProperties) as JsonSchema);
      } else if (typeof segment === "number" && asRecord(candidate.items) !== undefined) {
        next.push(asRecord(candidate.items) as JsonSchema);
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
    for (const segment of reference.slice(2).split("/")) target = asRecord(target?.[segment]);
    if (target !== undefined) for (const each of expand(root, target)) result.push(each);
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      const partSchema = asRecord(part);
      if (partSchema !== undefined) for (const each of expand(root, partSchema)) result.push(each);
    }
  }
  return result;
}

/** A YAML mapping's or JSON object's value as a record; undefined for anything else. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
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
    const properties = asRecord(candidate.properties);
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
