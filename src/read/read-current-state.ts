// Reads the current state: the paginated lists of the families asked for, concurrently (bounded),
// plus the plugin info some comparisons need (read-family.ts). `listsToPlan` names the lists a
// plan of a desired state needs.

import type { ApiClient } from "../api/index.js";
import { familyKey } from "../families.js";
import { listsToRead } from "../family-lists.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import { managedFields } from "../plan/compare-fields.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";
import { type FamilyReadRequest, readFamily } from "./read-family.js";

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
