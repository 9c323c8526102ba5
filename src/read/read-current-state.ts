// The one way to read a family (readFamily), and the current state: the lists asked for, with the
// plugin info some comparisons need.

import { type ApiClient, getConfig, isApiError, listAllConfigs } from "../api/index.js";
import { type FamilyRef, familyKey } from "../families.js";
import { listsToRead } from "../family-lists.js";
import { groupBy } from "../group-by.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import { managedFields } from "../plan/compare-fields.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";

/** `pluginInfoFor`: the plugins whose info to add (`all`: export). */
export interface FamilyReadRequest extends FamilyRef {
  pluginInfoFor?: readonly number[] | "all";
}

/**
 * posthog-2024 lists send plugin_info null while showing the plugin's description for a record's
 * empty one: a config without a description cannot be told from one with the plugin's text. So one
 * record of each plugin asked for is retrieved, and its plugin_info given to the plugin's records.
 */
export async function readFamily(client: ApiClient, ref: FamilyReadRequest): Promise<PluginConfigRecord[]> {
  const records = await listAllConfigs(client, ref.project, ref.family);
  const wanted = ref.pluginInfoFor === "all" ? undefined : new Set(ref.pluginInfoFor ?? []);
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

/**
 * A family must tell its own records from those of the families its list also shows (see
 * family-lists.ts). A project's lists stay side by side, so it can be planned once they are read.
 */
export function listsToPlan(desired: DesiredState): FamilyReadRequest[] {
  const emptied = new Map<string, number[]>();
  for (const { project, family, configs, fields: mode } of desired.families) {
    // With `fields: all`, a config that says no description means null too.
    const plugins = configs
      .map(({ fields }) => managedFields(fields, mode))
      .filter((fields) => fields.description === null || fields.description === "")
      .map((fields) => fields.plugin);
    if (plugins.length > 0) emptied.set(familyKey(project, family), [...new Set(plugins)]);
  }
  const refs = listsToRead(
    desired.families.map(({ project, family }) => ({ project, family, wholeFamily: true })),
  );
  return refs.map((ref) => {
    const pluginInfoFor = emptied.get(familyKey(ref.project, ref.family));
    return pluginInfoFor === undefined ? ref : { ...ref, pluginInfoFor };
  });
}

export type ReadProgress = (done: number, total: number) => void;

export async function readCurrentState(
  client: ApiClient,
  refs: readonly FamilyReadRequest[],
  options: { concurrency: number; onProgress?: ReadProgress },
): Promise<CurrentState> {
  let done = 0;
  const families = await mapConcurrent(refs, options.concurrency, async (ref): Promise<CurrentFamily> => {
    const records = await readFamily(client, ref);
    done += 1;
    options.onProgress?.(done, refs.length);
    return { project: ref.project, family: ref.family, records };
  });
  return { families };
}
