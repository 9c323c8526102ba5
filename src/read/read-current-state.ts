// Reads the current state: the paginated lists of the families asked for, concurrently (bounded),
// and nothing else. `listsToPlan` names the lists a plan of a desired state needs.

import type { ApiClient } from "../api/index.js";
import { listAllConfigs } from "../api/index.js";
import type { FamilyRef } from "../families.js";
import { listsToRead } from "../family-lists.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";

/**
 * The lists a plan of `desired` must read: a family it prunes must tell its own records from those
 * of the families its list also shows (see family-lists.ts). Desired families come sorted by
 * project, so a project's lists stay side by side: it can be planned as soon as they are read.
 */
export function listsToPlan(desired: DesiredState): FamilyRef[] {
  return listsToRead(
    desired.families.map(({ project, family, prune }) => ({ project, family, wholeFamily: prune })),
  );
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
