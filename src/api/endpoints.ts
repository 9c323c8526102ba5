// One typed function per endpoint of the service, for any family (paths come from families.ts).
// Everything plan and apply need from the network goes through these.

import type { FamilyName } from "../families.js";
import { getFamily } from "../families.js";
import type { ApiClient } from "./client.js";
import {
  InvalidRequestError,
  JobOutcomeUnknownError,
  LogsNotSupportedError,
  RequestFailedError,
} from "./errors.js";
import { paginate } from "./paginate.js";
import { collectionPath, projectsPath, rearrangePath, recordPath } from "./paths.js";
import type {
  JobInput,
  LogEntry,
  LogQuery,
  Page,
  PluginConfigInput,
  PluginConfigRecord,
  Project,
  RearrangeOrders,
} from "./types.js";

/** The projects the key can see, all pages. */
export async function listProjects(client: ApiClient): Promise<Project[]> {
  const projects: Project[] = [];
  const firstUrl = client.url(projectsPath(), { limit: client.pageSize });
  for await (const page of paginate(client, firstUrl, "projectPage")) projects.push(...page.results);
  return projects;
}

/** The family's records as listed (seed: without soft-deleted ones), page by page. */
export async function* listConfigs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
): AsyncGenerator<PluginConfigRecord, void, undefined> {
  const firstUrl = client.url(collectionPath(projectId, family), { limit: client.pageSize });
  for await (const page of paginate(client, firstUrl, "recordPage")) yield* page.results;
}

/** The whole family in an array: one request for a family of up to `pageSize` records. */
export async function listAllConfigs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
): Promise<PluginConfigRecord[]> {
  const records: PluginConfigRecord[] = [];
  for await (const record of listConfigs(client, projectId, family)) records.push(record);
  return records;
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
  return await client.requestText({ method: "GET", url });
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
    throw new InvalidRequestError("A job needs a type (the name of the job to run).");
  }
  const url = client.url(recordPath(projectId, family, configId, "job"));
  const body = { job: { type: job.type, payload: job.payload ?? {} } };
  try {
    return await client.requestOptionalJson({ method: "POST", url, body, safety: "unsafe" }, "record");
  } catch (error) {
    if (error instanceof RequestFailedError && error.outcomeUnknown) {
      throw new JobOutcomeUnknownError(client.describeRequest("POST", url), error);
    }
    throw error;
  }
}

/**
 * Sets orders: keys are config ids (seed) or plugin ids (posthog-2024), values the new orders.
 * Returns the family's records as the service lists them after the change (a bare array).
 */
export async function rearrange(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  orders: RearrangeOrders,
): Promise<PluginConfigRecord[]> {
  for (const [key, order] of Object.entries(orders)) {
    if (!Number.isSafeInteger(order)) {
      throw new InvalidRequestError(
        `Rearrange: the order of ${key} must be an integer, not ${String(order)}.`,
      );
    }
  }
  const url = client.url(rearrangePath(projectId, family));
  return await client.requestJson({ method: "PATCH", url, body: { orders } }, "recordList");
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

/** Log entries across pages, newest first, up to `maxEntries` (default: all). */
export async function* iterateLogs(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery = {},
  maxEntries = Number.POSITIVE_INFINITY,
): AsyncGenerator<LogEntry, void, undefined> {
  const firstUrl = logsUrl(client, projectId, family, configId, { limit: client.pageSize, ...query });
  let yielded = 0;
  for await (const page of paginate(client, firstUrl, "logPage")) {
    for (const entry of page.results) {
      if (yielded >= maxEntries) return;
      yielded += 1;
      yield entry;
    }
    if (yielded >= maxEntries) return;
  }
}

function logsUrl(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  configId: number,
  query: LogQuery,
): URL {
  if (!getFamily(family).hasLogs) throw new LogsNotSupportedError(family);
  for (const name of ["limit", "offset"] as const) {
    const value = query[name];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InvalidRequestError(`Logs: ${name} must be a non-negative integer, not ${String(value)}.`);
    }
  }
  return client.url(recordPath(projectId, family, configId, "logs"), {
    limit: query.limit,
    offset: query.offset,
    type_filter: query.typeFilter,
    search: query.search,
    after: formatTime(query.after),
    before: formatTime(query.before),
  });
}

function formatTime(value: string | Date | undefined): string | undefined {
  if (value === undefined || typeof value === "string") return value;
  if (Number.isNaN(value.getTime()))
    throw new InvalidRequestError("Logs: after/before must be a valid time.");
  return value.toISOString();
}
