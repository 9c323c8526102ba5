// The operations of the service and the routes to them (ROUTES). Handlers are synchronous: they
// read and change the store in one go and describe the response; the server writes it.

import { FAMILIES, type FamilyName } from "../families.js";
import { isObject } from "../plain-object.js";
import { accessibleProjects, type RequiredScope } from "./auth.js";
import { notFound, requiredField, serverError, validationError } from "./http-error.js";
import { type LogFilter, type LogStream, matchesLogFilter, paginateLogs } from "./log-stream.js";
import { paginate, parsePageRequest } from "./pagination.js";
import { FRONTEND_CONTENT_TYPE, renderFrontendModule, renderRecord } from "./record-view.js";
import type { EmulatorStore } from "./store.js";
import type { ApiKeySpec, ProfileBehaviour, ProjectData, StoredRecord } from "./types.js";
import { INT_MAX, INT_MIN, readRecordChanges, requireObjectBody } from "./validation.js";

/** Raw segments: anything a client sent. */
export interface RouteParams {
  project?: string;
  family?: FamilyName;
  id?: string;
}

export interface HandlerContext {
  store: EmulatorStore;
  profile: ProfileBehaviour;
  key: ApiKeySpec;
  /** Already checked against the key; absent for the project list. */
  project: ProjectData | undefined;
  params: RouteParams;
  /** A JSON value, a FormBody, or undefined when there was none. */
  body: unknown;
  /** For pagination links. */
  requestUrl: URL;
  logStream: LogStream;
}

export interface HandlerResult {
  status: number;
  body?: { text: string; contentType: string };
}

export type Handler = (context: HandlerContext) => HandlerResult;

export const json = (status: number, body: unknown): HandlerResult => ({
  status,
  body: { text: JSON.stringify(body), contentType: "application/json" },
});

/** The router guarantees both are there. */
function familyScope({ project, params }: HandlerContext): { projectId: number; family: FamilyName } {
  if (project === undefined || params.family === undefined) throw new Error("family route without project");
  return { projectId: project.id, family: params.family };
}

function parseRecordId(segment: string | undefined): number | undefined {
  return segment !== undefined && /^[0-9]{1,15}$/.test(segment) ? Number(segment) : undefined;
}

/** Soft-deleted ones included. */
function findRecord(context: HandlerContext): StoredRecord | undefined {
  const { projectId, family } = familyScope(context);
  const id = parseRecordId(context.params.id);
  return id === undefined ? undefined : context.store.findInFamily(projectId, family, id);
}

function findRecordOrThrow(context: HandlerContext): StoredRecord {
  const record = findRecord(context);
  if (!record) throw notFound();
  return record;
}

function renderFor(context: HandlerContext, record: StoredRecord, as: "single" | "collection" = "single") {
  return renderRecord(record, context.store.plugin(record.plugin), context.profile, as);
}

function renderCollection(context: HandlerContext, records: readonly StoredRecord[]) {
  return records.map((record) => renderFor(context, record, "collection"));
}

function readChanges(context: HandlerContext, partial: boolean) {
  return readRecordChanges(context.body, partial, context.profile, (id) => !!context.store.plugin(id));
}

const listProjects: Handler = ({ requestUrl, key, store }) => {
  const page = parsePageRequest(requestUrl.searchParams);
  return json(200, paginate(accessibleProjects(key, store.data.projects), page, requestUrl));
};

const retrieveProject: Handler = ({ project }) => json(200, project);

const listRecords: Handler = (context) => {
  const page = parsePageRequest(context.requestUrl.searchParams);
  const { projectId, family } = familyScope(context);
  const listed = paginate(context.store.listFamily(projectId, family), page, context.requestUrl);
  return json(200, { ...listed, results: renderCollection(context, listed.results) });
};

const createRecord: Handler = (context) => {
  const { projectId, family } = familyScope(context);
  const { changes, attach, detach } = readChanges(context, false);
  const { plugin, order } = changes;
  // readRecordChanges has checked both are present; this narrows their types.
  if (plugin === undefined || order === undefined)
    throw new Error("required fields missing after validation");
  const record = context.store.createRecord(family, projectId, { ...changes, plugin, order });
  // As the service does: the record is saved, then its attachments.
  context.store.updateAttachments(record, attach, detach);
  return json(201, renderFor(context, record));
};

const retrieveRecord: Handler = (context) => json(200, renderFor(context, findRecordOrThrow(context)));

const updateRecord: Handler = (context) => {
  const record = findRecordOrThrow(context);
  const { changes, attach, detach } = readChanges(context, true);
  context.store.updateRecord(record, changes);
  context.store.updateAttachments(record, attach, detach);
  return json(200, renderFor(context, record));
};

const deleteRecord: Handler = (context) => {
  const record = findRecord(context);
  // The real service fails inside its delete override when the id is unknown.
  if (!record) throw context.profile.deleteUnknownStatus === 500 ? serverError() : notFound();
  const soft = context.profile.deleteMode === "soft-delete";
  context.store.updateRecord(record, soft ? { deleted: true } : { enabled: false });
  return { status: 204 };
};

function parseInstant(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw validationError("invalid_input", "Enter a valid date/time.", name);
  return ms;
}

function parseLogFilter(query: URLSearchParams): LogFilter {
  // type_filter may be repeated or comma-separated.
  const types = query.getAll("type_filter").flatMap((value) => value.split(","));
  return {
    types: new Set(types.map((value) => value.trim().toUpperCase()).filter((value) => value !== "")),
    search: query.get("search")?.toLowerCase() ?? "",
    after: parseInstant(query, "after"),
    before: parseInstant(query, "before"),
  };
}

/**
 * An unknown config id is an empty page, as in the real service. Stored entries (jobs, data-file
 * ones) are merged with the stream the config logs by itself (log-stream.ts).
 */
const listLogs: Handler = (context) => {
  const { requestUrl, store } = context;
  const page = parsePageRequest(requestUrl.searchParams);
  const filter = parseLogFilter(requestUrl.searchParams);
  const { projectId, family } = familyScope(context);
  const configId = parseRecordId(context.params.id);
  if (configId === undefined) return json(200, paginateLogs([], undefined, page, requestUrl));
  const stored = store.logsOf(projectId, configId).filter((entry) => matchesLogFilter(entry, filter));
  const record = store.findInFamily(projectId, family, configId);
  const synthesized = record && context.logStream.of(record, store.plugin(record.plugin), filter);
  return json(200, paginateLogs(stored, synthesized, page, requestUrl));
};

const retrieveFrontend: Handler = (context) => {
  const record = findRecordOrThrow(context);
  const text = renderFrontendModule(record, context.store.plugin(record.plugin));
  return { status: 200, body: { text, contentType: FRONTEND_CONTENT_TYPE } };
};

/** Of `{"job": {"type": "<name>", "payload": {...}}}`. */
function parseJobType(rawBody: unknown): string {
  const body = requireObjectBody(rawBody ?? {});
  if (!Object.hasOwn(body, "job")) throw requiredField("job");
  const job = body.job;
  const notADictionary = (attr: string) =>
    validationError("invalid_input", "Expected a dictionary of items.", attr);
  if (!isObject(job)) throw notADictionary("job");
  if (!Object.hasOwn(job, "type")) throw requiredField("job__type");
  if (typeof job.type !== "string" || job.type.trim() === "") {
    throw validationError("invalid_input", "A job type must be a non-empty string.", "job__type");
  }
  if (Object.hasOwn(job, "payload") && !isObject(job.payload)) throw notADictionary("job__payload");
  return job.type;
}

const createJob: Handler = (context) => {
  const record = findRecordOrThrow(context);
  const type = parseJobType(context.body);
  // A queued job shows up in the config's logs, so a client can observe that it ran.
  context.store.appendLog(record, { source: "SYSTEM", type: "INFO", message: `Job ${type} queued` });
  return context.profile.jobResponse === "empty" ? { status: 200 } : json(200, renderFor(context, record));
};

const CANONICAL_ID = /^(0|[1-9][0-9]{0,15})$/;
// The real service converts keys with Python's int(), which tolerates spaces and a sign.
const PYTHON_INT = /^\s*[+-]?[0-9]+\s*$/;

function isStoredOrder(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX;
}

/** seed: keyed by config id within the family; bad input is a 400. */
function rearrangeByConfig(context: HandlerContext): readonly StoredRecord[] {
  const { projectId, family } = familyScope(context);
  const body = requireObjectBody(context.body ?? {});
  if (!Object.hasOwn(body, "orders")) throw requiredField("orders");
  const orders = body.orders;
  const invalid = (detail: string) => validationError("invalid_input", detail, "orders");
  if (!isObject(orders)) throw invalid("Expected a dictionary of config ids to orders.");
  const entries = Object.entries(orders);
  // Validate everything first so a bad entry changes nothing.
  for (const [key, value] of entries) {
    if (!CANONICAL_ID.test(key)) throw invalid(`"${key}" is not a valid config id.`);
    if (!isStoredOrder(value)) throw invalid(`Order of config ${key}: a valid integer is required.`);
  }
  for (const [key, value] of entries) {
    const record = context.store.findInFamily(projectId, family, Number(key));
    // An order that does not change is no write (updated_at stays).
    if (record && !record.deleted && isStoredOrder(value) && record.order !== value)
      context.store.updateRecord(record, { order: value });
  }
  return context.store.listFamily(projectId, family);
}

/**
 * posthog-2024: keyed by plugin id over the project's enabled configs of both families. As the real
 * service: the last config wins for a duplicated plugin, entries apply one by one, and input it
 * cannot convert is a 500.
 */
function rearrangeByPlugin(context: HandlerContext): StoredRecord[] {
  const { projectId } = familyScope(context);
  const body = context.body ?? {};
  if (!isObject(body)) throw serverError();
  const orders = Object.hasOwn(body, "orders") ? body.orders : {};
  if (!isObject(orders)) throw serverError();
  const byPlugin = new Map<number, StoredRecord>();
  for (const record of context.store.listEnabled(projectId).sort((a, b) => a.id - b.id))
    byPlugin.set(record.plugin, record);
  for (const [key, value] of Object.entries(orders)) {
    if (!PYTHON_INT.test(key)) throw serverError();
    const record = byPlugin.get(Number(key.trim()));
    if (!record || record.order === value) continue;
    if (!isStoredOrder(value)) throw serverError();
    context.store.updateRecord(record, { order: value });
  }
  return context.store.listEnabled(projectId);
}

const rearrangeRecords: Handler = (context) => {
  const rearrange = context.profile.rearrangeKeyedBy === "plugin" ? rearrangeByPlugin : rearrangeByConfig;
  return json(200, renderCollection(context, rearrange(context)));
};

export interface Operation {
  name: string;
  handle: Handler;
  /** null lets any valid key in (listing projects is how a client finds its id). */
  scope: RequiredScope;
  /** "json" reads a JSON body, "form" also a form body where the profile takes them; others ignore it. */
  body?: "json" | "form";
  /** The real service has no scope for this action, so it refuses scoped keys (posthog-2024). */
  unscoped?: true;
}

const op = (name: string, handle: Handler, scope: Operation["scope"], more: Partial<Operation> = {}) => ({
  name,
  handle,
  scope,
  ...more,
});
const [READ, WRITE, FORM, JSON_BODY] = ["plugin:read", "plugin:write", "form", "json"] as const;
const FAMILY = "api/projects/:project/:family";

// First match wins, so the literal `rearrange` shadows a record id of that name.
export const ROUTES: readonly [string, Readonly<Record<string, Operation>>][] = [
  ["api/projects", { GET: op("projects.list", listProjects, null) }],
  ["api/projects/:project", { GET: op("projects.retrieve", retrieveProject, null) }],
  [FAMILY, { GET: op("list", listRecords, READ), POST: op("create", createRecord, WRITE, { body: FORM }) }],
  [
    `${FAMILY}/rearrange`,
    { PATCH: op("rearrange", rearrangeRecords, WRITE, { body: JSON_BODY, unscoped: true }) },
  ],
  [
    `${FAMILY}/:id`,
    {
      GET: op("retrieve", retrieveRecord, READ),
      PATCH: op("update", updateRecord, WRITE, { body: FORM }),
      DELETE: op("delete", deleteRecord, WRITE),
    },
  ],
  [`${FAMILY}/:id/frontend`, { GET: op("frontend", retrieveFrontend, READ, { unscoped: true }) }],
  [`${FAMILY}/:id/job`, { POST: op("job", createJob, WRITE, { body: JSON_BODY, unscoped: true }) }],
  ["api/projects/:project/:logs-family/:id/logs", { GET: op("logs", listLogs, READ) }],
];

type RouteMatch =
  | { kind: "operation"; operation: Operation; params: RouteParams }
  /** The path exists but not with this method: answered 405, after authentication. */
  | { kind: "wrong-method"; allowed: readonly string[] };

/** Matched on the raw (undecoded) segments, so an encoded slash can never reach another resource. */
function matchSegments(pattern: readonly string[], segments: readonly string[]): RouteParams | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: RouteParams = {};
  for (const [index, expected] of pattern.entries()) {
    const actual = segments[index];
    if (actual === undefined || actual === "") return undefined;
    if (expected === ":project") params.project = actual;
    else if (expected === ":id") params.id = actual;
    else if (expected === ":family" || expected === ":logs-family") {
      const family = FAMILIES.find((candidate) => candidate.pathSegment === actual);
      if (!family || (expected === ":logs-family" && !family.hasLogs)) return undefined;
      params.family = family.name;
    } else if (expected !== actual) return undefined;
  }
  return params;
}

/** Without the one optional trailing slash. */
function pathOfTarget(target: string): string {
  const path = target.split("?", 1)[0] ?? "";
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** A 404 for a path the service lacks. */
export function matchRoute(method: string, target: string): RouteMatch {
  const path = pathOfTarget(target);
  if (!path.startsWith("/")) throw notFound();
  const segments = path.slice(1).split("/");
  for (const [pattern, methods] of ROUTES) {
    const params = matchSegments(pattern.split("/"), segments);
    if (params === undefined) continue;
    const operation = methods[method];
    if (operation === undefined) return { kind: "wrong-method", allowed: Object.keys(methods) };
    return { kind: "operation", operation, params };
  }
  throw notFound();
}
