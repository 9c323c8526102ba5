// The one way to read a family (readFamily), and the current state: the lists of the families
// asked for, concurrently (bounded), with the plugin info some comparisons need. `listsToPlan`
// names the lists a plan of a desired state needs.

import { type ApiClient, getConfig, isApiError, listAllConfigs } from "../api/index.js";
import { type FamilyRef, familyKey } from "../families.js";
import { listsToRead } from "../family-lists.js";
import { groupBy } from "../group-by.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import { managedFields } from "../plan/compare-fields.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";
import type { PluginConfigRecord } from "../wire-types.js";

/** A list to read, and the plugins whose info to add (those named, or every plugin listed: export). */
export interface FamilyReadRequest extends FamilyRef {
  pluginInfoFor?: readonly number[] | "all";
}

/**
 * Lists the family; then, for each plugin of `ref.pluginInfoFor` whose listed records have
 * plugin_info null, retrieves one of them (a single record carries it) and gives its plugin_info to
 * every listed record of that plugin. One request per such plugin, none where lists carry it.
 * posthog-2024 sends plugin_info null in lists, while showing the plugin's own description where a
 * record's is null or "": from the list alone, a config meant to have no description (plan) or
 * that has none (export) cannot be told from one with the plugin's text.
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

/**
 * The lists a plan of `desired` must read: a family must tell its own records from those of the
 * families its list also shows (see family-lists.ts), to prune only its own and to warn only of
 * order ties with its own unmanaged records. Desired families come sorted by
 * project, so a project's lists stay side by side: it can be planned as soon as they are read.
 * Each list names the plugins whose configs the manifest wants without a description.
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
