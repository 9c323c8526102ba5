// One typed function per endpoint of the service, for any family. Ids are checked and encoded in
// the paths built here, so a project or config id can never turn into another path.

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

/** The projects the key can see, from one read whose pages add up (see listItems). */
export async function listProjects(client: ApiClient): Promise<Project[]> {
  return await listItems(client, client.url(PROJECTS_PATH, { limit: client.pageSize }), "projectPage");
}

/** Whether the base URL reaches the API: `false` for a 404, `undefined` when unsure (a 403). */
export async function reachesProjectList(client: ApiClient): Promise<boolean | undefined> {
  try {
    await client.request({ method: "GET", url: client.url(PROJECTS_PATH, { limit: 1 }) });
    return true;
  } catch (error) {
    return isApiError(error, 404) ? false : undefined;
  }
}

/**
 * The whole family as listed, from one read whose pages add up (see listItems): a plan, a dedupe
 * or a create's re-read never works from records of a half-changed list.
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

/** Repeated safely on failure since it sets absolute values. */
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
 * seed soft-deletes; posthog-2024 only disables (a record leaves its list through
 * `updateConfig(..., {deleted: true})`).
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

/** JavaScript text. */
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
 * null for posthog-2024's empty answer. Never repeated after a failure that may have reached the
 * service: a job run twice may do harm.
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

/** Keys are config ids (seed) or plugin ids (posthog-2024); returns the family as listed after it. */
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

/** `typeFilter` becomes repeated `type_filter` parameters. */
export interface LogQuery {
  limit?: number;
  typeFilter?: readonly string[];
  search?: string;
  /** ISO-8601. */
  after?: string | Date;
  before?: string | Date;
}

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
 * Log entries across pages, newest first, each once. Logs are a live stream: entries arriving at
 * the head shift older ones to later pages, so repeats are skipped by id, and the list-change
 * refusal of a whole list's read is not applied (it would refuse a busy plugin's logs).
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
    // One page of repeats is a page's worth of new entries arriving; several in a row is a server
    // repeating its pages.
    pagesWithNothingNew = yieldedIds.size === before ? pagesWithNothingNew + 1 : 0;
    if (pagesWithNothingNew >= MAX_LOG_PAGES_WITHOUT_NEW_ENTRIES) {
      throw new ServiceError("pagination_loop", client.describeRequest("GET", firstUrl), {
        reason: `${pagesWithNothingNew} pages in a row hold only log entries already read`,
      });
    }
  }
}

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

/** With the trailing slash the service's examples use. */
export function collectionPath(projectId: string, family: FamilyName): string {
  return `${PROJECTS_PATH}${encodeProjectId(projectId)}/${getFamily(family).pathSegment}/`;
}

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
