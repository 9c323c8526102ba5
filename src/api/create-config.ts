// Creating a record without ever creating it twice. A POST that may have been processed (the
// connection dropped after sending, a timeout, a 502/503/504) is not repeated blindly: the family
// is re-read for the record, and the POST is sent again only if it is not there.

import type { FamilyName } from "../families.js";
import type { ApiClient } from "./client.js";
import { listAllConfigs } from "./endpoints.js";
import { CreateOutcomeUnknownError, RequestFailedError } from "./errors.js";
import { collectionPath } from "./paths.js";
import type { PluginConfigInput, PluginConfigRecord } from "./types.js";

export interface CreateConfigOptions {
  /**
   * Ids of the family's records before this create (apply has them from its plan read). When
   * absent, the family is read first, which costs one request.
   */
  knownIds?: ReadonlySet<number> | undefined;
}

export async function createConfig(
  client: ApiClient,
  projectId: string,
  family: FamilyName,
  body: PluginConfigInput,
  options: CreateConfigOptions = {},
): Promise<PluginConfigRecord> {
  const url = client.url(collectionPath(projectId, family));
  const knownIds =
    options.knownIds ?? new Set((await listAllConfigs(client, projectId, family)).map((record) => record.id));
  const maxAttempts = client.retryOptions.retries + 1;
  for (let attempt = 1; ; attempt += 1) {
    let failure: RequestFailedError;
    try {
      return await client.requestJson({ method: "POST", url, body, safety: "unsafe" }, "record");
    } catch (error) {
      if (!(error instanceof RequestFailedError) || !error.outcomeUnknown) throw error;
      failure = error;
    }

    let records: PluginConfigRecord[];
    try {
      records = await listAllConfigs(client, projectId, family);
    } catch (rereadError) {
      throw new CreateOutcomeUnknownError(
        client.describeRequest("POST", url),
        failure.message,
        rereadError instanceof Error ? rereadError.message : String(rereadError),
      );
    }
    const created = findCreatedRecord(records, body, knownIds);
    if (created) {
      client.traceLine(`POST ${url.pathname}: record ${created.id} was created by the attempt that failed`);
      return created;
    }
    if (attempt >= maxAttempts) {
      // The inner error counts one POST; say how often it was really sent, and that none stuck.
      if (attempt > 1) {
        failure.message = `${failure.message}; the create was sent ${attempt} times, and re-reading the family after each found no record made by it`;
      }
      throw failure;
    }
    client.traceLine(`POST ${url.pathname}: not created by the attempt that failed; sending it again`);
    await client.backoff(attempt);
  }
}

/**
 * The record a create made: new since `knownIds`, same plugin, and the same values for the fields
 * the service stores as sent. A null name or description may come back as the plugin's own
 * (posthog-2024), so those only count when given as strings. Newest first if several match.
 */
export function findCreatedRecord(
  records: readonly PluginConfigRecord[],
  body: PluginConfigInput,
  knownIds: ReadonlySet<number>,
): PluginConfigRecord | undefined {
  const matches = records.filter(
    (record) =>
      !knownIds.has(record.id) &&
      (body.plugin === undefined || record.plugin === body.plugin) &&
      (typeof body.name !== "string" || record.name === body.name) &&
      (typeof body.description !== "string" || record.description === body.description) &&
      (body.order === undefined || record.order === body.order) &&
      (body.enabled === undefined || record.enabled === body.enabled),
  );
  return matches.sort((a, b) => b.id - a.id)[0];
}
