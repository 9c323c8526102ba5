// The manifest as plain data for ajv, built straight from a YAML reader (a parse tree was a big
// manifest's largest cost), interpolated on the way, with where each value was written.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findPackageFile } from "../package-files.js";
import { asRecord } from "../plain-object.js";
import { registryOf, type SecretRegistry } from "../redact.js";
import type { Position, YamlProblem } from "./diagnostics.js";
import { interpolateText, KEY_NEVER_INTERPOLATED, NO_SECRETS } from "./interpolate.js";
import { type LocationIndex, NodePlacesBuilder } from "./node-places.js";
import type { BlockBuilder, ScalarValue } from "./parse-block-yaml.js";
import type { ManifestVariables } from "./variables.js";

export type { LocationIndex, NodeLocation } from "./node-places.js";

export interface PlainManifest {
  /** Not yet validated. */
  value: unknown;
  locations: LocationIndex;
}

type JsonSchema = { [keyword: string]: unknown };

const SCHEMA_FILE = join("schemas", "manifest.schema.json");

let schemaCache: JsonSchema | undefined;

export function loadManifestSchema(): JsonSchema {
  schemaCache ??= JSON.parse(readFileSync(findPackageFile(SCHEMA_FILE), "utf8")) as JsonSchema;
  return schemaCache;
}

interface PlainContainer {
  value: Record<string, unknown> | unknown[];
  place: number;
  /** Null for the document. */
  slot: PlainSlot | null;
  /** In the `projects` map: each project id (interpolated) and its key's offset. */
  projects?: Map<string, number>;
}

interface PlainSlot {
  container: PlainContainer;
  /** Undefined for a list's item. */
  key: string | undefined;
  keyOffset: number;
  index: number;
}

/** Where what is read goes when its key was refused: nowhere. */
const DROPPED = {} as PlainSlot & PlainContainer;

const INITIAL_PLACES = 4096;

/** Its words may need positions too. */
interface BuildProblem {
  offset: number;
  message: string | ((positionAt: (offset: number) => Position) => string);
}

/**
 * Interpolates values and the project ids (the keys of `projects`); an interpolated value is typed
 * as the schema expects there, so `plugin: ${PLUGIN_ID}` becomes an integer.
 */
export class PlainBuilder implements BlockBuilder<PlainContainer, PlainSlot> {
  private root: unknown;
  private readonly places = new NodePlacesBuilder(INITIAL_PLACES);
  private readonly secrets: SecretRegistry;
  private readonly problems: BuildProblem[] = [];
  private readonly schema = loadManifestSchema();
  // The schema's types at a path depend on which keys it names, not on which list indexes: one
  // walk of the schema per shape of path, not per interpolated value.
  private readonly typesByShape = new Map<string, Set<string>>();

  constructor(
    private readonly text: string,
    private readonly variables: ManifestVariables,
  ) {
    this.secrets = registryOf(variables.secrets ?? NO_SECRETS);
  }

  container(kind: "map" | "seq", offset: number, slot: PlainSlot | null): PlainContainer {
    if (slot === DROPPED) return DROPPED;
    const value = kind === "map" ? {} : [];
    const place = this.places.open(kind, offset, slot?.key, slot?.keyOffset ?? 0);
    this.put(slot, value);
    const container: PlainContainer = { value, place, slot };
    if (kind === "map" && slot?.key === "projects" && slot.container.slot === null)
      container.projects = new Map();
    return container;
  }

  scalar(value: ScalarValue, offset: number, end: number, slot: PlainSlot | null): void {
    if (slot === DROPPED) return;
    let plain: unknown = value;
    // Most values hold neither a reference nor the key: no interpolation to make.
    if (typeof value === "string" && (value.includes("${") || this.secrets.holds(value))) {
      const interpolated = this.interpolate(value, offset, end);
      if (interpolated.changed) plain = coerceInterpolated(interpolated.value, this.typesAt(slot));
    }
    this.places.close(this.places.open("scalar", offset, slot?.key, slot?.keyOffset ?? 0));
    this.put(slot, plain);
  }

  entrySlot(map: PlainContainer, key: string, keyOffset: number, keyEnd: number): PlainSlot {
    if (map === DROPPED) return DROPPED;
    const projects = map.projects;
    if (projects === undefined) {
      // Any key but a project id holding the API key is refused, and dropped so no later message quotes it.
      if (!this.secrets.holds(key)) return { container: map, key, keyOffset, index: 0 };
      this.problems.push({
        offset: keyOffset,
        message: `this key contains the API key; ${KEY_NEVER_INTERPOLATED}. Remove it, and replace the key: it is in this file`,
      });
      return DROPPED;
    }
    const { value: project, failed } = this.interpolate(key, keyOffset, keyEnd);
    const first = projects.get(project);
    if (first !== undefined) {
      // Only interpolation can make two keys equal: the readers already refused literal duplicates.
      this.problems.push({
        offset: keyOffset,
        message: (positionAt) => {
          const { line, col } = positionAt(first);
          return `project "${project}" is also defined at line ${line}, column ${col} (after interpolation); merge the two blocks`;
        },
      });
      return DROPPED;
    }
    // A key that failed to interpolate is not a project id to compare with the others.
    if (!failed) projects.set(project, keyOffset);
    return { container: map, key: project, keyOffset, index: 0 };
  }

  itemSlot(seq: PlainContainer): PlainSlot {
    if (seq === DROPPED) return DROPPED;
    return { container: seq, key: undefined, keyOffset: 0, index: (seq.value as unknown[]).length };
  }

  end(container: PlainContainer): void {
    if (container !== DROPPED) this.places.close(container.place);
  }

  /** `plain` is undefined for a text of only comments. */
  finish(positionAt: (offset: number) => Position): {
    plain: PlainManifest | undefined;
    errors: YamlProblem[];
  } {
    const errors = this.problems.map(({ offset, message }) => ({
      position: positionAt(offset),
      message: typeof message === "string" ? message : message(positionAt),
    }));
    if (this.root === undefined) return { plain: undefined, errors };
    return { plain: { value: this.root, locations: this.places.finish(positionAt) }, errors };
  }

  /** A problem points at its reference. */
  private interpolate(
    text: string,
    offset: number,
    end: number,
  ): { value: string; changed: boolean; failed: boolean } {
    const result = interpolateText(text, this.variables);
    const written = result.problems.length > 0 ? this.text.slice(offset, end) : "";
    let searchFrom = 0;
    for (const problem of result.problems) {
      // Point at the reference itself when it appears verbatim in the source (it does unless escaped).
      const found = written.indexOf(problem.token, searchFrom);
      if (found >= 0) searchFrom = found + problem.token.length;
      this.problems.push({ offset: found >= 0 ? offset + found : offset, message: problem.message });
    }
    return { value: result.value, changed: result.changed, failed: result.problems.length > 0 };
  }

  private typesAt(slot: PlainSlot | null): Set<string> {
    const path: (string | number)[] = [];
    for (let at = slot; at !== null; at = at.container.slot) path.push(at.key ?? at.index);
    path.reverse();
    const shape = JSON.stringify(path.map((segment) => (typeof segment === "number" ? 0 : segment)));
    let types = this.typesByShape.get(shape);
    if (types === undefined) {
      types = schemaTypesAt(this.schema, path);
      this.typesByShape.set(shape, types);
    }
    return types;
  }

  private put(slot: PlainSlot | null, value: unknown): void {
    if (slot === null) {
      this.root = value;
      return;
    }
    const target = slot.container.value;
    if (Array.isArray(target)) target.push(value);
    else setKey(target, slot.key ?? "", value);
  }
}

/** A key named "__proto__" stays a key: it does not replace the prototype. */
function setKey(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  } else object[key] = value;
}

/** Following $ref and allOf. */
function schemasAt(schema: JsonSchema, path: readonly (string | number)[]): JsonSchema[] {
  let current = expand(schema, schema);
  for (const segment of path) {
    current = current.flatMap((candidate) => {
      const child =
        typeof segment === "number"
          ? asRecord(candidate.items)
          : (asRecord(asRecord(candidate.properties)?.[segment]) ?? asRecord(candidate.additionalProperties));
      return child === undefined ? [] : expand(schema, child);
    });
  }
  return current;
}

function expand(root: JsonSchema, schema: JsonSchema): JsonSchema[] {
  const parts = Array.isArray(schema.allOf) ? schema.allOf.map(asRecord) : [];
  const reference = schema.$ref;
  if (typeof reference === "string" && reference.startsWith("#/")) {
    // Any local pointer (a template's field refers to `#/definitions/config/properties/plugin`).
    let target: JsonSchema | undefined = root;
    for (const segment of reference.slice(2).split("/")) target = asRecord(target?.[segment]);
    parts.unshift(target);
  }
  return [schema, ...parts.flatMap((part) => (part === undefined ? [] : expand(root, part)))];
}

function schemaTypesAt(schema: JsonSchema, path: readonly (string | number)[]): Set<string> {
  const types = new Set<string>();
  for (const candidate of schemasAt(schema, path)) {
    // `type` is one type or a list of them.
    for (const type of [candidate.type].flat()) if (typeof type === "string") types.add(type);
    if (typeof candidate.const === "number") types.add("integer");
  }
  return types;
}

export function allowedKeysAt(path: readonly (string | number)[]): string[] {
  const keys = new Set<string>();
  for (const candidate of schemasAt(loadManifestSchema(), path)) {
    const properties = asRecord(candidate.properties);
    if (properties !== undefined) for (const key of Object.keys(properties)) keys.add(key);
  }
  return [...keys];
}

/** Text stays text where text is allowed. */
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
