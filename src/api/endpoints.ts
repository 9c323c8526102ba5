// One typed function per endpoint of the service, for any family (paths come from families.ts).
// Everything plan and apply need from the network goes through these. Ids are checked and encoded
// in the paths built here, so a project or config id can never turn into another path.

import { type FamilyName, getFamily } from "../families.js";
import { InputError } from "../input-error.js";
import type {
  JobInput,
  LogEntry,
  Page,
  PluginConfigInput,
  PluginConfigRecord,
  Project,
  RearrangeOrders,
} from "../wire-types.js";
import type { ApiClient } from "./client.js";
import { listItems, paginate } from "./paginate.js";
import { isApiError, isRequestError, ServiceError } from "./service-error.js";

const PROJECTS_PATH = "/api/projects/";

/** The projects the key can see, all pages, from one read whose pages add up (see listItems). */
export async function listProjects(client: ApiClient): Promise<Project[]> {
  return await listItems(client, client.url(PROJECTS_PATH, { limit: client.pageSize }), "projectPage");
}

/**
 * Whether the base URL reaches the service's API: one page of one project from the project list.
 * `false` for a 404 (the path is not the API's), `undefined` when the answer says neither (a 403).
 */
export async function reachesProjectList(client: ApiClient): Promise<boolean | undefined> {
  try {
    await client.request({ method: "GET", url: client.url(PROJECTS_PATH, { limit: 1 }) });
    return true;
  } catch (error) {
    return isApiError(error, 404) ? false : undefined;
  }
}

/**
 * The whole family as listed (seed: without soft-deleted ones): one request for a family of up
 * to `pageSize` records. The pages are checked to add up to one state of the list, which is read
 * again if it changed while it was paged (see listItems); a plan, a dedupe or a create's
 * re-read never works from records of a half-changed list.
 */
export async function listAllConfigs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
): Promise<PluginConfigRecord[]> {
  const firstUrl = client.url(collectionPath(projectId, family), { limit: client.pageSize });
  return await listItems(client, firstUrl, "recordPage");
}

export async function getConfig(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
): Promise<PluginConfigRecord> {
  const url = client.url(recordPath(projectId, family, configId));
  return await client.requestJson({ method: "GET", url }, "record");
}

/** PATCH with the fields to change; repeated safely on failure since it sets absolute values. */
export async function updateConfig(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  changes: PluginConfigInput,
): Promise<PluginConfigRecord> {
  const url = client.url(recordPath(projectId, family, configId));
  return await client.requestJson({ method: "PATCH", url, body: changes }, "record");
}

/**
 * DELETE. seed soft-deletes; posthog-2024 only disables (a record leaves its list through
 * `updateConfig(..., {deleted: true})`). A 404 after a retry whose first attempt's outcome was
 * unknown counts as done.
 */
export async function deleteConfig(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
): Promise<void> {
  const url = client.url(recordPath(projectId, family, configId));
  await client.request({ method: "DELETE", url, notFoundMeansDone: true });
}

/** The record's frontend module (JavaScript text). */
export async function getFrontend(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
): Promise<string> {
  const url = client.url(recordPath(projectId, family, configId, "frontend"));
  return (await client.request({ method: "GET", url })).body.toString("utf8");
}

/**
 * Runs a job on a record. Returns the record, or null when the service answers with an empty body
 * (posthog-2024). Never repeated after a failure that may have reached the service.
 */
export async function createJob(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  job: JobInput,
): Promise<PluginConfigRecord | null> {
  if (typeof job.type !== "string" || job.type.trim() === "") {
    throw new InputError("invalid_request", { message: "A job needs a type (the name of the job to run)." });
  }
  const url = client.url(recordPath(projectId, family, configId, "job"));
  const body = { job: { type: job.type, payload: job.payload ?? {} } };
  const spec = { method: "POST", url, body, safety: "unsafe" } as const;
  try {
    const response = await client.request(spec);
    // posthog-2024 answers with an empty body.
    if (response.body.toString("utf8").trim() === "") return null;
    return client.parseJson(spec, response.body, "record");
  } catch (error) {
    if (isRequestError(error) && error.outcomeUnknown) {
      throw new ServiceError("job_outcome_unknown", client.describeRequest("POST", url), {
        failure: error.message,
      });
    }
    throw error;
  }
}

/**
 * Sets orders: keys are config ids (seed) or plugin ids (posthog-2024), values the new orders.
 * Returns the family's records as the service lists them after the change (a bare array).
 */
export async function rearrangeConfigs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  orders: RearrangeOrders,
): Promise<PluginConfigRecord[]> {
  for (const [key, order] of Object.entries(orders)) {
    if (!Number.isSafeInteger(order)) {
      throw new InputError("invalid_request", {
        message: `Rearrange: the order of ${key} must be an integer, not ${String(order)}.`,
      });
    }
  }
  const url = client.url(`${collectionPath(projectId, family)}rearrange/`);
  return await client.requestJson({ method: "PATCH", url, body: { orders } }, "recordList");
}

/** The filters of the logs endpoint; `typeFilter` becomes repeated `type_filter` parameters. */
export interface LogQuery {
  limit?: number;
  typeFilter?: readonly string[];
  search?: string;
  /** ISO-8601 time, or a Date. */
  after?: string | Date;
  before?: string | Date;
}

/** One page of a plugin config's log entries, newest first, filtered as asked. */
export async function listLogs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery = {},
): Promise<Page<LogEntry>> {
  return client.requestJson(
    { method: "GET", url: logsUrl(client, projectId, family, configId, query) },
    "logPage",
  );
}

/**
 * Log entries across pages, newest first, up to `maxEntries` (default: all), each entry once.
 *
 * Logs are a live stream, not a list to reconcile: entries arrive at the head while the pages are
 * read, and `count` grows with them. An entry added between two pages shifts the older ones to
 * later offsets, so the next page starts with entries already yielded: those are skipped by id.
 * Entries only leave at the tail (retention), which shifts nothing before it. So the list-change
 * refusal of a whole list's read would refuse a busy plugin's logs for no gain, and is not applied;
 * the next links are still held to this config's logs and these filters.
 */
export async function* iterateLogs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery = {},
  maxEntries = Number.POSITIVE_INFINITY,
): AsyncGenerator<LogEntry, void, undefined> {
  const firstUrl = logsUrl(client, projectId, family, configId, { limit: client.pageSize, ...query });
  const yieldedIds = new Set<string>();
  let pagesWithNothingNew = 0;
  for await (const page of paginate(client, firstUrl, "logPage")) {
    const before = yieldedIds.size;
    for (const entry of page.results) {
      if (yieldedIds.size >= maxEntries) return;
      if (yieldedIds.has(entry.id)) continue;
      yieldedIds.add(entry.id);
      yield entry;
    }
    if (yieldedIds.size >= maxEntries) return;
    // A page wholly of entries already shown takes a page's worth of new ones arriving between
    // two reads; several in a row is a server repeating its pages, which would otherwise run on
    // to its count.
    pagesWithNothingNew = yieldedIds.size === before ? pagesWithNothingNew + 1 : 0;
    if (pagesWithNothingNew >= MAX_LOG_PAGES_WITHOUT_NEW_ENTRIES) {
      throw new ServiceError("pagination_loop", client.describeRequest("GET", firstUrl), {
        reason: `${pagesWithNothingNew} pages in a row hold only log entries already read`,
      });
    }
  }
}

/** Pages in a row without a log entry not read before, after which a log read is refused as looping. */
const MAX_LOG_PAGES_WITHOUT_NEW_ENTRIES = 3;

function logsUrl(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery,
): URL {
  if (!getFamily(family).hasLogs) throw new InputError("logs_not_supported", { family: family });
  const { limit } = query;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new InputError("invalid_request", {
      message: `Logs: limit must be a non-negative integer, not ${String(limit)}.`,
    });
  }
  return client.url(recordPath(projectId, family, configId, "logs"), {
    limit,
    type_filter: query.typeFilter,
    search: query.search,
    after: formatTime(query.after),
    before: formatTime(query.before),
  });
}

function formatTime(value: string | Date | undefined): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  if (Number.isNaN(value.getTime()))
    throw new InputError("invalid_request", { message: "Logs: after/before must be a valid time." });
  return value.toISOString();
}

// C0 and C1 control characters and DEL: nothing a project name contains, and header/log hazards.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** Checks a project id and encodes it as one path segment. */
function encodeProjectId(projectId: string): string {
  const reason =
    typeof projectId !== "string" || projectId === ""
      ? "it is empty; use an id from the project listing"
      : projectId === "." || projectId === ".."
        ? "a dot segment would name another path"
        : CONTROL_CHARACTERS.test(projectId)
          ? "it contains control characters"
          : undefined;
  if (reason !== undefined)
    throw new InputError("invalid_project_id", { projectId: String(projectId), reason });
  // `@` is a legal path character and `@current` is a documented alias; keep it readable.
  return encodeURIComponent(projectId).replace(/%40/g, "@");
}

/** `/api/projects/{project}/{family}/`, with the trailing slash the service's examples use. */
export function collectionPath(projectId: string, family: FamilyName): string {
  return `${PROJECTS_PATH}${encodeProjectId(projectId)}/${getFamily(family).pathSegment}/`;
}

/** A record's path, or one of its sub-resources. */
function recordPath(
  projectId: string,
  family: FamilyName,
  configId: number,
  subresource?: "frontend" | "job" | "logs",
): string {
  if (!Number.isSafeInteger(configId) || configId < 0)
    throw new InputError("invalid_config_id", { configId: configId });
  const base = `${collectionPath(projectId, family)}${configId}/`;
  return subresource === undefined ? base : `${base}${subresource}/`;
}
