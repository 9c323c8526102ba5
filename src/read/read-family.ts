// Reads one family's list with the plugin_info that tells a record's own description from the
// plugin's. posthog-2024 sends plugin_info null in lists, while showing the plugin's own
// description where a record's is null or "": from the list alone, a config meant to have no
// description (plan) or that has none (export) cannot be told from one with the plugin's text.

import { type ApiClient, getConfig, isApiError, listAllConfigs } from "../api/index.js";
import type { FamilyRef } from "../families.js";
import { groupBy } from "../group-by.js";
import type { PluginConfigRecord } from "../wire-types.js";

/** The plugins whose info a read adds: those named, or every plugin listed (export). */
export type PluginInfoWanted = readonly number[] | "all";

/** A list to read, and the plugins whose info to add: see readFamily. */
export interface FamilyReadRequest extends FamilyRef {
  pluginInfoFor?: PluginInfoWanted;
}

/**
 * Lists the family; then, for each plugin of `ref.pluginInfoFor` whose listed records have
 * plugin_info null, retrieves one of them (a single record carries it) and gives its plugin_info to
 * every listed record of that plugin. One request per such plugin, none where lists carry it.
 */
export async function readFamily(client: ApiClient, ref: FamilyReadRequest): Promise<PluginConfigRecord[]> {
  const records = await listAllConfigs(client, ref.project, ref.family);
  const wanted = ref.pluginInfoFor === "all" ? undefined : new Set(ref.pluginInfoFor ?? []);
  // Only where the list sent plugin_info as null, as posthog-2024's lists do.
  const lacking = groupBy(
    records.filter((record) => wanted?.has(record.plugin) !== false && record.plugin_info === null),
    (record) => record.plugin,
  );
  for (const ofPlugin of lacking.values()) {
    const [sample] = ofPlugin;
    if (sample === undefined) continue;
    const pluginInfo = await retrievePluginInfo(client, ref, sample.id);
    for (const record of ofPlugin) record.plugin_info = pluginInfo;
  }
  return records;
}

async function retrievePluginInfo(client: ApiClient, ref: FamilyRef, id: number): Promise<unknown> {
  try {
    return (await getConfig(client, ref.project, ref.family, id)).plugin_info;
  } catch (error) {
    // Gone since the list was read: the plan shows the description as listed, as it would have.
    if (isApiError(error, 404)) return null;
    throw error;
  }
}
