// Reads EmulatorData (and the journal's batches of changes) from untrusted JSON (a data file a
// person may have edited): every field is checked against a reader, and a problem is reported with
// its path. Each shape below is checked by the compiler against its type.

import { FAMILY_NAMES, type FamilyName, isFamilyName } from "../families.js";
import type { LogEntry } from "../wire-types.js";
import type {
  ApiKeySpec,
  EmulatorData,
  PluginData,
  ProjectData,
  StoredAttachment,
  StoredRecord,
} from "./types.js";

/** The changes one commit made: records as they are after it, new log entries, the id counter. */
export interface ChangeBatch {
  records: StoredRecord[];
  logEntries: LogEntry[];
  nextRecordId: number;
}

export class DataFileError extends Error {
  constructor(
    message: string,
    /** What to do about it, when the message does not already say (a journal's errors do). */
    readonly advice = "fix the file or remove it to start from the example data",
  ) {
    super(message);
    this.name = "DataFileError";
  }
}

type Reader<T> = (value: unknown, path: string) => T;

function fail(path: string, expected: string): never {
  throw new DataFileError(`${path} must be ${expected}`);
}

function check<T>(test: (value: unknown) => value is T, expected: string): Reader<T> {
  return (value, path) => (test(value) ? value : fail(path, expected));
}

const object = check(
  (value): value is Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value),
  "an object",
);
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

/** A field that may be missing, and then is left out. */
const optional =
  <T>(read: Reader<T>): Reader<T | undefined> =>
  (value, path) =>
    value === undefined ? undefined : read(value, path);

/** A field that may be missing or null, and then is `fallback`. */
const orElse =
  <T>(read: Reader<T>, fallback: T): Reader<T> =>
  (value, path) =>
    value === undefined || value === null ? structuredClone(fallback) : read(value, path);

/** An object of exactly these fields, read in this order; unknown fields are dropped. */
function shape<T>(fields: { [K in keyof T]: Reader<T[K]> }): Reader<T> {
  return (value, path) => {
    const raw = object(value, path);
    const result: Record<string, unknown> = {};
    for (const [name, read] of Object.entries<Reader<unknown>>(fields)) {
      const field = read(raw[name], `${path}.${name}`);
      if (field !== undefined) result[name] = field;
    }
    return result as T;
  };
}

const strings = arrayOf(string);

const readPlugin = shape<PluginData>({
  id: integer,
  name: string,
  description: orElse(string, ""),
  capabilities: orElse(shape({ methods: orElse(strings, []), scheduled_tasks: orElse(strings, []) }), {
    methods: [],
    scheduled_tasks: [],
  }),
  frontendApp: boolean,
});

const readKey = shape<ApiKeySpec>({
  key: string,
  scopes: nullable(strings),
  projects: (value, path) => (value === "*" ? "*" : arrayOf(integer)(value, path)),
  label: optional(string),
});

const readRecord = shape<StoredRecord>({
  id: integer,
  family,
  project: integer,
  plugin: integer,
  enabled: boolean,
  order: integer,
  name: nullable(string),
  description: nullable(string),
  deleted: boolean,
  match_action: nullable(integer),
  config: string,
  attachments: optional(
    arrayOf(
      shape<StoredAttachment>({ uid: integer, key: string, name: string, size: integer, type: string }),
    ),
  ),
  error: nullable(string),
  delivery_rate_24h: nullable(string),
  created_at: string,
  updated_at: string,
});

const readLogEntry = shape<LogEntry>({
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

const readData = shape<EmulatorData>({
  version: (value, path) =>
    value === 1 ? 1 : fail(path, "1 (the only data format this version understands)"),
  plugins: arrayOf(readPlugin),
  projects: arrayOf(shape<ProjectData>({ id: integer, name: string })),
  keys: arrayOf(readKey),
  records: arrayOf(readRecord),
  logEntries: arrayOf(readLogEntry),
  nextIds: shape({ record: integer }),
});

/** Validates parsed JSON as EmulatorData (version 1); throws DataFileError naming the bad field. */
export function parseEmulatorData(value: unknown): EmulatorData {
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

/** Validates one journal line (see persistence.ts) as a ChangeBatch; throws DataFileError naming the bad field. */
export const parseChangeBatch = shape<ChangeBatch>({
  records: arrayOf(readRecord),
  logEntries: arrayOf(readLogEntry),
  nextRecordId: integer,
});
