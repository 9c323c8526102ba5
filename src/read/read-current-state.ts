// Reads the current state a plan needs: one paginated list per project and family of the
// desired state, concurrently (bounded), and nothing else.

import type { ApiClient } from "../api/index.js";
import { listAllConfigs } from "../api/index.js";
import { type FamilyName, type FamilyRef, familyKey } from "../families.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";

/**
 * The lists a plan of `desired` must read. A project that prunes plugin_configs without managing
 * its frontend apps also has its frontend list read: on servers where plugin_configs lists the
 * frontend apps too (posthog-2024), that is how the planner knows not to prune them.
 */
export function familiesToRead(desired: DesiredState): FamilyRef[] {
  const refs: FamilyRef[] = [];
  const seen = new Set<string>();
  const add = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    if (seen.has(key)) return;
    seen.add(key);
    refs.push({ project, family });
  };
  // Desired families come sorted by project, so a project's lists stay side by side: it can be
  // planned as soon as they are read.
  for (const family of desired.families) {
    add(family.project, family.family);
    if (family.family === "plugin_configs" && family.prune)
      add(family.project, "pipeline_frontend_apps_configs");
  }
  return refs;
}

export type ReadProgress = (done: number, total: number) => void;

export async function readCurrentState(
  client: ApiClient,
  refs: readonly FamilyRef[],
  options: { concurrency: number; onProgress?: ReadProgress },
): Promise<CurrentState> {
  let done = 0;
  const families = await mapConcurrent(refs, options.concurrency, async (ref): Promise<CurrentFamily> => {
    const records = await listAllConfigs(client, ref.project, ref.family);
    done += 1;
    options.onProgress?.(done, refs.length);
    return { project: ref.project, family: ref.family, records };
  });
  return { families };
}
