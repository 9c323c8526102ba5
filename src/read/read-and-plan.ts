// Reads the current state and plans it, project by project: a project is planned (pure, see
// plan/compute-plan.ts) as soon as its lists are in, so planning overlaps the reads still in flight.

import type { ApiClient } from "../api/index.js";
import { listAllConfigs } from "../api/index.js";
import type { DesiredState } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import {
  assemblePlan,
  type PlanOptions,
  type PlanResult,
  type ProjectPlan,
  planProject,
} from "../plan/compute-plan.js";
import type { CurrentFamily, CurrentState } from "../plan/types.js";
import { familiesToRead } from "./read-current-state.js";

/** How far the read has come: lists read, and projects whose every list is read (and planned). */
export interface ReadProgressCounts {
  listsDone: number;
  lists: number;
  projectsDone: number;
  projects: number;
}

export interface ReadAndPlanOptions {
  concurrency: number;
  plan?: PlanOptions;
  onProgress?: (counts: ReadProgressCounts) => void;
}

export interface ReadAndPlanResult extends PlanResult {
  current: CurrentState;
  /** Time spent in the (synchronous, pure) planning itself, in milliseconds. */
  planningMs: number;
}

export async function readAndPlan(
  client: ApiClient,
  desired: DesiredState,
  options: ReadAndPlanOptions,
): Promise<ReadAndPlanResult> {
  const refs = familiesToRead(desired);
  const outstanding = new Map<string, number>();
  for (const ref of refs) outstanding.set(ref.project, (outstanding.get(ref.project) ?? 0) + 1);
  const lists = new Map<string, CurrentFamily[]>();
  const parts = new Map<string, ProjectPlan>();
  let planningMs = 0;
  let listsDone = 0;
  let projectsDone = 0;

  const families = await mapConcurrent(refs, options.concurrency, async (ref): Promise<CurrentFamily> => {
    const family: CurrentFamily = { ...ref, records: await listAllConfigs(client, ref.project, ref.family) };
    listsDone += 1;
    const projectLists = lists.get(ref.project) ?? [];
    projectLists.push(family);
    lists.set(ref.project, projectLists);
    const left = (outstanding.get(ref.project) ?? 1) - 1;
    outstanding.set(ref.project, left);
    if (left === 0) {
      const started = performance.now();
      parts.set(ref.project, planProject(ref.project, desired.families, projectLists, options.plan));
      planningMs += performance.now() - started;
      projectsDone += 1;
    }
    options.onProgress?.({ listsDone, lists: refs.length, projectsDone, projects: outstanding.size });
    return family;
  });

  const started = performance.now();
  const projects = [...new Set(desired.families.map((family) => family.project))];
  const result = assemblePlan(projects.flatMap((project) => parts.get(project) ?? []));
  planningMs += performance.now() - started;
  return { ...result, current: { families }, planningMs };
}
