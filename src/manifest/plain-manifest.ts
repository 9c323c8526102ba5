// The manifest as plain data for ajv, with an index from JSON pointer to where each value was
// written. Interpolated values are typed by what the schema expects there, so
// `plugin: ${PLUGIN_ID}` becomes an integer.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";
import type { Position } from "./diagnostics.js";
import type { MapEntry, MapNode, ValueNode } from "./yaml-nodes.js";

/** Where a value of the plain manifest was written, by JSON pointer (as in ajv's instancePath). */
export interface NodeLocation {
  /** The key naming this value, when it is a map entry. */
  key?: Position;
  /** The value itself (for a map or list, where it starts). */
  value: Position;
}

/**
 * Finds where a value was written. Positions stay on the parsed tree and are looked up on demand:
 * a pointer per node, built for every node of a big file, cost more than the rest of the load.
 */
export interface LocationIndex {
  /** By JSON pointer, as ajv's instancePath: "/projects/1/plugin_configs/configs/0/name". */
  get(pointer: string): NodeLocation | undefined;
  /** The same as get() of the path's pointer, without building the pointer. */
  lookup(path: readonly (string | number)[]): NodeLocation | undefined;
}

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

export function unescapePointerSegment(segment: string): string {
  if (!segment.includes("~")) return segment;
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Builds the plain value ajv checks, and the index from JSON pointer to source position. */
export function toPlainManifest(root: ValueNode): PlainManifest {
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

  const visit = (node: ValueNode): unknown => {
    if (node.kind === "scalar") {
      return node.interpolated === true ? coerceInterpolated(node.value, typesHere()) : node.value;
    }
    if (node.kind === "seq") {
      const items: unknown[] = new Array(node.items.length);
      for (let index = 0; index < node.items.length; index++) {
        path.push(index);
        items[index] = visit(node.items[index] as ValueNode);
        path.pop();
      }
      return items;
    }
    const object: Record<string, unknown> = {};
    for (const entry of node.entries) {
      path.push(entry.key);
      const value = visit(entry.value);
      path.pop();
      // defineProperty: a key named "__proto__" must stay a key, not replace the prototype.
      if (entry.key === "__proto__") {
        Object.defineProperty(object, entry.key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else object[entry.key] = value;
    }
    return object;
  };

  return { value: visit(root), locations: new TreeLocations(root) };
}

/** Maps with more entries than this get a key index on their first lookup, so lookups stay O(1). */
const SCAN_LIMIT = 8;
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
/** No escaped pointer segment has these (so none matched when the index was a map of pointers). */
const INVALID_ESCAPE = /~(?![01])/;

/** A node reached by a lookup, and the position of the key that named it (none for list items). */
interface Step {
  node: ValueNode;
  key: Position | undefined;
}

function locationOf({ node, key }: Step): NodeLocation {
  const value = node.kind === "scalar" ? node.span.position : node.position;
  return key === undefined ? { value } : { key, value };
}

class TreeLocations implements LocationIndex {
  private readonly keyIndexes = new Map<MapNode, Map<string, MapEntry>>();

  constructor(private readonly root: ValueNode) {}

  get(pointer: string): NodeLocation | undefined {
    if (pointer !== "" && !pointer.startsWith("/")) return undefined;
    // Segment by segment, without an array of them: a big manifest asks this for every value.
    let step: Step | undefined = { node: this.root, key: undefined };
    for (let start = 1; start <= pointer.length && step !== undefined; ) {
      const slash = pointer.indexOf("/", start);
      const end = slash < 0 ? pointer.length : slash;
      const raw = pointer.slice(start, end);
      if (raw.includes("~") && INVALID_ESCAPE.test(raw)) return undefined;
      step = this.stepInto(step.node, unescapePointerSegment(raw));
      start = end + 1;
    }
    return step === undefined ? undefined : locationOf(step);
  }

  lookup(path: readonly (string | number)[]): NodeLocation | undefined {
    let step: Step | undefined = { node: this.root, key: undefined };
    for (const segment of path) {
      step = this.stepInto(step.node, String(segment));
      if (step === undefined) return undefined;
    }
    return locationOf(step);
  }

  private stepInto(node: ValueNode, segment: string): Step | undefined {
    if (node.kind === "seq") {
      const item = ARRAY_INDEX.test(segment) ? node.items[Number(segment)] : undefined;
      return item === undefined ? undefined : { node: item, key: undefined };
    }
    if (node.kind === "map") {
      const entry = this.entryOf(node, segment);
      return entry === undefined ? undefined : { node: entry.value, key: entry.keySpan.position };
    }
    return undefined;
  }

  private entryOf(node: MapNode, key: string): MapEntry | undefined {
    // The last entry of a key, as in the plain value: two project keys can be equal when one of
    // them failed to interpolate (that error is reported; this is what is left to point at).
    const { entries } = node;
    if (entries.length <= SCAN_LIMIT) {
      for (let index = entries.length - 1; index >= 0; index--) {
        if (entries[index]?.key === key) return entries[index];
      }
      return undefined;
    }
    let index = this.keyIndexes.get(node);
    if (index === undefined) {
      index = new Map(entries.map((entry) => [entry.key, entry]));
      this.keyIndexes.set(node, index);
    }
    return index.get(key);
  }
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
    if (target !== undefined) for (const each of expand(root, target)) result.push(each);
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) {
      const partSchema = asSchema(part);
      if (partSchema !== undefined) for (const each of expand(root, partSchema)) result.push(each);
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
