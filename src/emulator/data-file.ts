// Reads EmulatorData (and the journal's batches of changes) from untrusted JSON (a data file a
// person may have edited): every field is checked, and a problem is reported with its path.

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
  /** What to do about it, when the message does not already say (a journal's errors do). */
  readonly advice: string;

  constructor(message: string, advice = "fix the file or remove it to start from the example data") {
    super(message);
    this.name = "DataFileError";
    this.advice = advice;
  }
}

type Json = Record<string, unknown>;

function fail(path: string, expected: string): never {
  throw new DataFileError(`${path} must be ${expected}`);
}

function object(value: unknown, path: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(path, "an object");
  return value as Json;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, "an array");
  return value;
}

function integer(value: unknown, path: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) fail(path, "an integer");
  return value;
}

function string(value: unknown, path: string): string {
  if (typeof value !== "string") fail(path, "a string");
  return value;
}

function boolean(value: unknown, path: string): boolean {
  if (typeof value !== "boolean") fail(path, "true or false");
  return value;
}

function nullable<T>(read: (value: unknown, path: string) => T) {
  return (value: unknown, path: string): T | null => (value === null ? null : read(value, path));
}

function strings(value: unknown, path: string): string[] {
  return array(value, path).map((item, index) => string(item, `${path}[${index}]`));
}

function family(value: unknown, path: string): FamilyName {
  const name = string(value, path);
  if (!isFamilyName(name)) fail(path, `one of ${FAMILY_NAMES.join(", ")}`);
  return name;
}

function readPlugin(value: unknown, path: string): PluginData {
  const raw = object(value, path);
  const capabilities = object(raw.capabilities ?? {}, `${path}.capabilities`);
  return {
    id: integer(raw.id, `${path}.id`),
    name: string(raw.name, `${path}.name`),
    description: string(raw.description ?? "", `${path}.description`),
    capabilities: {
      methods: strings(capabilities.methods ?? [], `${path}.capabilities.methods`),
      scheduled_tasks: strings(capabilities.scheduled_tasks ?? [], `${path}.capabilities.scheduled_tasks`),
    },
    frontendApp: boolean(raw.frontendApp, `${path}.frontendApp`),
  };
}

function readProject(value: unknown, path: string): ProjectData {
  const raw = object(value, path);
  return { id: integer(raw.id, `${path}.id`), name: string(raw.name, `${path}.name`) };
}

function readKey(value: unknown, path: string): ApiKeySpec {
  const raw = object(value, path);
  const key: ApiKeySpec = {
    key: string(raw.key, `${path}.key`),
    scopes: nullable(strings)(raw.scopes, `${path}.scopes`),
    projects:
      raw.projects === "*"
        ? "*"
        : array(raw.projects, `${path}.projects`).map((id, index) =>
            integer(id, `${path}.projects[${index}]`),
          ),
  };
  if (raw.label !== undefined) key.label = string(raw.label, `${path}.label`);
  return key;
}

function readRecord(value: unknown, path: string): StoredRecord {
  const raw = object(value, path);
  return {
    id: integer(raw.id, `${path}.id`),
    family: family(raw.family, `${path}.family`),
    project: integer(raw.project, `${path}.project`),
    plugin: integer(raw.plugin, `${path}.plugin`),
    enabled: boolean(raw.enabled, `${path}.enabled`),
    order: integer(raw.order, `${path}.order`),
    name: nullable(string)(raw.name, `${path}.name`),
    description: nullable(string)(raw.description, `${path}.description`),
    deleted: boolean(raw.deleted, `${path}.deleted`),
    match_action: nullable(integer)(raw.match_action, `${path}.match_action`),
    config: string(raw.config, `${path}.config`),
    ...(raw.attachments === undefined
      ? {}
      : {
          attachments: array(raw.attachments, `${path}.attachments`).map((item, index) =>
            readAttachment(item, `${path}.attachments[${index}]`),
          ),
        }),
    error: nullable(string)(raw.error, `${path}.error`),
    delivery_rate_24h: nullable(string)(raw.delivery_rate_24h, `${path}.delivery_rate_24h`),
    created_at: string(raw.created_at, `${path}.created_at`),
    updated_at: string(raw.updated_at, `${path}.updated_at`),
  };
}

function readAttachment(value: unknown, path: string): StoredAttachment {
  const raw = object(value, path);
  return {
    uid: integer(raw.uid, `${path}.uid`),
    key: string(raw.key, `${path}.key`),
    name: string(raw.name, `${path}.name`),
    size: integer(raw.size, `${path}.size`),
    type: string(raw.type, `${path}.type`),
  };
}

function readLogEntry(value: unknown, path: string): LogEntry {
  const raw = object(value, path);
  return {
    id: string(raw.id, `${path}.id`),
    team_id: integer(raw.team_id, `${path}.team_id`),
    plugin_id: integer(raw.plugin_id, `${path}.plugin_id`),
    plugin_config_id: integer(raw.plugin_config_id, `${path}.plugin_config_id`),
    timestamp: string(raw.timestamp, `${path}.timestamp`),
    source: string(raw.source, `${path}.source`),
    type: string(raw.type, `${path}.type`),
    message: string(raw.message, `${path}.message`),
    instance_id: string(raw.instance_id, `${path}.instance_id`),
  };
}

function uniqueIds(items: readonly { id: number | string }[], path: string): void {
  const seen = new Set<number | string>();
  for (const [index, item] of items.entries()) {
    if (seen.has(item.id)) throw new DataFileError(`${path}[${index}].id ${item.id} is used twice`);
    seen.add(item.id);
  }
}

/** Validates parsed JSON as EmulatorData (version 1); throws DataFileError naming the bad field. */
export function parseEmulatorData(value: unknown): EmulatorData {
  const raw = object(value, "data");
  if (raw.version !== 1) fail("data.version", "1 (the only data format this version understands)");
  const read = <T>(field: string, reader: (item: unknown, path: string) => T): T[] =>
    array(raw[field], `data.${field}`).map((item, index) => reader(item, `data.${field}[${index}]`));
  const data: EmulatorData = {
    version: 1,
    plugins: read("plugins", readPlugin),
    projects: read("projects", readProject),
    keys: read("keys", readKey),
    records: read("records", readRecord),
    logEntries: read("logEntries", readLogEntry),
    nextIds: { record: integer(object(raw.nextIds, "data.nextIds").record, "data.nextIds.record") },
  };
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

/** Validates one journal line (see journal.ts) as a ChangeBatch; throws DataFileError naming the bad field. */
export function parseChangeBatch(value: unknown, path: string): ChangeBatch {
  const raw = object(value, path);
  return {
    records: array(raw.records, `${path}.records`).map((item, index) =>
      readRecord(item, `${path}.records[${index}]`),
    ),
    logEntries: array(raw.logEntries, `${path}.logEntries`).map((item, index) =>
      readLogEntry(item, `${path}.logEntries[${index}]`),
    ),
    nextRecordId: integer(raw.nextRecordId, `${path}.nextRecordId`),
  };
}
