// The data file's format and its reader: untrusted JSON (a person may have edited it) checked field
// by field, a problem reported with its path. The shapes are the one statement of each stored type.

import { FAMILY_NAMES, type FamilyName, isFamilyName } from "../families.js";
import { isObject } from "../plain-object.js";
import type { LogEntry } from "../wire-types.js";

export class DataFileError extends Error {
  constructor(
    message: string,
    /** When the message does not already say (a journal's errors do). */
    readonly advice = "fix the file or remove it to start from the example data",
  ) {
    super(message);
    this.name = "DataFileError";
  }
}

type Reader<T> = (value: unknown, path: string) => T;
type Readers = Record<string, Reader<unknown>>;
type Read<F extends Readers, K extends keyof F> = ReturnType<F[K]>;
/** A field whose reader may give undefined is optional. */
type Shaped<F extends Readers> = {
  [K in keyof F as undefined extends Read<F, K> ? never : K]: Read<F, K>;
} & { [K in keyof F as undefined extends Read<F, K> ? K : never]?: Exclude<Read<F, K>, undefined> };

function fail(path: string, expected: string): never {
  throw new DataFileError(`${path} must be ${expected}`);
}

function check<T>(test: (value: unknown) => value is T, expected: string): Reader<T> {
  return (value, path) => (test(value) ? value : fail(path, expected));
}

const object = check(isObject, "an object");
const integer = check((value): value is number => Number.isSafeInteger(value), "an integer");
const string = check((value): value is string => typeof value === "string", "a string");
const boolean = check((value): value is boolean => typeof value === "boolean", "true or false");
const family = check(
  (value): value is FamilyName => typeof value === "string" && isFamilyName(value),
  `one of ${FAMILY_NAMES.join(", ")}`,
);

function arrayOf<T>(read: Reader<T>): Reader<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) fail(path, "an array");
    return value.map((item, index) => read(item, `${path}[${index}]`));
  };
}

const nullable =
  <T>(read: Reader<T>): Reader<T | null> =>
  (value, path) =>
    value === null ? null : read(value, path);

const optional =
  <T>(read: Reader<T>): Reader<T | undefined> =>
  (value, path) =>
    value === undefined ? undefined : read(value, path);

/** Missing or null: `fallback`. */
const orElse =
  <T>(read: Reader<T>, fallback: T): Reader<T> =>
  (value, path) =>
    value === undefined || value === null ? structuredClone(fallback) : read(value, path);

/** Read in this order; unknown fields are dropped. */
function shape<F extends Readers>(fields: F): Reader<Shaped<F>> {
  return (value, path) => {
    const raw = object(value, path);
    const result: Record<string, unknown> = {};
    for (const [name, read] of Object.entries<Reader<unknown>>(fields)) {
      const field = read(raw[name], `${path}.${name}`);
      if (field !== undefined) result[name] = field;
    }
    return result as Shaped<F>;
  };
}

const strings = arrayOf(string);

export const readPlugin = shape({
  id: integer,
  name: string,
  description: orElse(string, ""),
  /** What the plugin can do server-side; frontend apps have neither. */
  capabilities: orElse(shape({ methods: orElse(strings, []), scheduled_tasks: orElse(strings, []) }), {
    methods: [],
    scheduled_tasks: [],
  }),
  /** A site/frontend app: what `pipeline_frontend_apps_configs` shows in the posthog-2024 profile. */
  frontendApp: boolean,
});

export const readKey = shape({
  key: string,
  /** `null` is an unscoped legacy key: full access. */
  scopes: nullable(strings),
  projects: (value, path): number[] | "*" => (value === "*" ? "*" : arrayOf(integer)(value, path)),
  label: optional(string),
});

/** An attachment as the real service shows it in `config[key]` (its contents are not kept). */
const readAttachment = shape({ uid: integer, key: string, name: string, size: integer, type: string });

/**
 * A plugin config as stored, with the family it was created through. `name` and `description` are
 * stored as sent; the posthog-2024 fallback to the plugin's own applies only on output.
 */
export const readRecord = shape({
  id: integer,
  family,
  /** The record's `team_id`. */
  project: integer,
  plugin: integer,
  enabled: boolean,
  order: integer,
  name: nullable(string),
  description: nullable(string),
  deleted: boolean,
  match_action: nullable(integer),
  /** JSON text: the seed profile writes it as this string, posthog-2024 as the object it holds. */
  config: string,
  /** Files attached to config fields through a form (posthog-2024), shown inside `config`. */
  attachments: optional(arrayOf(readAttachment)),
  error: nullable(string),
  delivery_rate_24h: nullable(string),
  created_at: string,
  updated_at: string,
});

// As the logs endpoint sends them (the compiler checks it against the wire's type).
const readLogEntry: Reader<LogEntry> = shape({
  id: string,
  team_id: integer,
  plugin_id: integer,
  plugin_config_id: integer,
  timestamp: string,
  source: string,
  type: string,
  message: string,
  instance_id: string,
});

function uniqueIds(items: readonly { id: number | string }[], path: string): void {
  const seen = new Set<number | string>();
  for (const [index, item] of items.entries()) {
    if (seen.has(item.id)) throw new DataFileError(`${path}[${index}].id ${item.id} is used twice`);
    seen.add(item.id);
  }
}

export const readProject = shape({ id: integer, name: string });

export const readData = shape({
  version: (value, path): 1 =>
    value === 1 ? 1 : fail(path, "1 (the only data format this version understands)"),
  plugins: arrayOf(readPlugin),
  projects: arrayOf(readProject),
  keys: arrayOf(readKey),
  records: arrayOf(readRecord),
  logEntries: arrayOf(readLogEntry),
  nextIds: shape({ record: integer }),
});

/** Throws DataFileError naming the bad field. */
export function parseEmulatorData(value: unknown): ReturnType<typeof readData> {
  const data = readData(value, "data");
  uniqueIds(data.plugins, "data.plugins");
  uniqueIds(data.projects, "data.projects");
  uniqueIds(data.records, "data.records");
  // A hand-edited file may add records without bumping the counter; never reuse an id.
  // A loop, not Math.max(...ids): spreading 200,000 arguments overflows the call stack.
  let highestId = 0;
  for (const record of data.records) if (record.id > highestId) highestId = record.id;
  data.nextIds.record = Math.max(data.nextIds.record, highestId + 1);
  return data;
}

/** One journal line (see persistence.ts): records as one commit left them, new log entries. */
export const parseChangeBatch = shape({
  records: arrayOf(readRecord),
  logEntries: arrayOf(readLogEntry),
  nextRecordId: integer,
});

export type ChangeBatch = ReturnType<typeof parseChangeBatch>;
