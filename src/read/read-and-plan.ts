// Reads the current state and plans it: a project is planned as soon as its lists are in, so
// planning overlaps the reads still in flight; computePlan then joins the parts.

import {
  type ApiClient,
  collectionPath,
  isApiError,
  listProjects,
  reachesProjectList,
  type ServiceError,
} from "../api/index.js";
import type { PcsyncError } from "../errors.js";
import { type FamilyRef, familyKey } from "../families.js";
import { groupBy } from "../group-by.js";
import { InputError } from "../input-error.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { DesiredFamily, DesiredState, RolloutSpec, SourceLocation } from "../manifest/types.js";
import { mapConcurrent } from "../map-concurrent.js";
import {
  computePlan,
  type PlanDiagnostic,
  type PlanOptions,
  type PlanResult,
  type ProjectPlan,
  planProject,
} from "../plan/compute-plan.js";
import { assignWaves, projectsWritten } from "../plan/rollout-waves.js";
import type { CurrentFamily, CurrentState, Plan, PlanRollout } from "../plan/types.js";
import { RefusedError } from "../refused-error.js";
import { listsToPlan, readFamily } from "./read-current-state.js";

/** `projectsDone`: every list read and planned. */
export interface ReadProgressCounts {
  listsDone: number;
  lists: number;
  projectsDone: number;
  projects: number;
}

export interface ReadAndPlanOptions {
  concurrency: number;
  plan?: PlanOptions;
  /**
   * watch: an owner conflict refuses its family only, named in `refused` (its drift still shows);
   * otherwise the whole plan is refused.
   */
  refuseFamilyOnly?: boolean;
  onProgress?: (counts: ReadProgressCounts) => void;
  /**
   * Each project's part as soon as it is planned (watch shows its drift at once); read only. A part
   * with errors is given too; the plan will not be made then.
   */
  onProjectPlanned?: ((part: Readonly<ProjectPlan>, desired: readonly DesiredFamily[]) => void) | undefined;
  /** Lists this run read earlier, not read again (a rollout's re-read: families it did not change). */
  known?: CurrentState | undefined;
}

export interface ReadAndPlanResult extends PlanResult {
  current: CurrentState;
  /** In the (synchronous, pure) planning itself. */
  planningMs: number;
}

/** A refusal when every problem is an owner conflict. */
function planErrorOf(errors: readonly PlanDiagnostic[]): PcsyncError {
  const problems = errors.map((error) => `${error.source}: ${error.message}`);
  return errors.length > 0 && errors.every((error) => error.refused === true)
    ? new RefusedError("owner_conflict", { problems })
    : new InputError("plan_invalid", { problems });
}

/** An InputError when the manifest and the server's state contradict each other. */
export async function readAndPlan(
  client: ApiClient,
  desired: DesiredState,
  options: ReadAndPlanOptions,
): Promise<{ plan: Plan; current: CurrentState; refused: PlanDiagnostic[] }> {
  await refuseCurrentAlias(client, desired);
  const { plan, errors, current, refused } = await readAndPlanProjects(client, desired, options);
  if (!plan) throw planErrorOf(errors);
  const planned: Plan = { ...plan, server: client.base.display };
  if (desired.rollout !== undefined) planned.rollout = planRolloutWaves(desired.rollout, planned);
  return { plan: planned, current, refused };
}

/** An InputError when a project the plan writes is in no wave. */
function planRolloutWaves(spec: RolloutSpec, plan: Plan): PlanRollout {
  const { rollout, unassigned } = assignWaves(spec, projectsWritten(plan));
  if (unassigned.length === 0) return rollout;
  const shown = unassigned.slice(0, 20).map((project) => `"${project}"`);
  const more = unassigned.length > shown.length ? ` and ${unassigned.length - shown.length} more` : "";
  throw new InputError("plan_invalid", {
    problems: [
      `${formatSource(spec.source)}: the plan changes project${unassigned.length === 1 ? "" : "s"} ${shown.join(", ")}${more}, which no wave of rollout takes; end the waves with one that says \`percent: 100\`, or name ${unassigned.length === 1 ? "it" : "them"} in a wave`,
    ],
  });
}

const CURRENT_PROJECT = "@current";

/**
 * A manifest naming `@current` also by its id would plan the same records twice (one's prune could
 * delete the other's configs). One extra request, only when `@current` is mixed with others.
 */
async function refuseCurrentAlias(client: ApiClient, desired: DesiredState): Promise<void> {
  const alias = desired.families.find((family) => family.project === CURRENT_PROJECT);
  if (!alias || desired.families.every((family) => family.project === CURRENT_PROJECT)) return;
  const [first] = await listProjects(client);
  if (!first) return;
  const resolved = String(first.id);
  const named = desired.families.find((family) => family.project === resolved);
  if (!named) return;
  throw new InputError("plan_invalid", {
    problems: [
      `${formatSource(alias.source)}: project "${CURRENT_PROJECT}" is project ${resolved} for this API key, which the manifest also defines at ${formatSource(named.source)}; keep one of the two`,
    ],
  });
}

/** The plan's errors are returned, not thrown. */
export async function readAndPlanProjects(
  client: ApiClient,
  desired: DesiredState,
  options: ReadAndPlanOptions,
): Promise<ReadAndPlanResult> {
  const needed = listsToPlan(desired);
  const knownLists = new Map(
    (options.known?.families ?? []).map((family) => [familyKey(family.project, family.family), family]),
  );
  const given: CurrentFamily[] = [];
  const refs = needed.filter((ref) => {
    const known = knownLists.get(familyKey(ref.project, ref.family));
    if (known !== undefined) given.push(known);
    return known === undefined;
  });
  const planOptions: PlanOptions = { owner: desired.owner?.name, ...options.plan };
  const desiredByProject = groupBy(desired.families, (family) => family.project);
  const outstanding = new Map<string, number>();
  for (const ref of refs) outstanding.set(ref.project, (outstanding.get(ref.project) ?? 0) + 1);
  const lists = groupBy(given, (family) => family.project);
  const parts = new Map<string, ProjectPlan>();
  let planningMs = 0;
  let listsDone = 0;
  let projectsDone = 0;
  const planned = (project: string) => {
    const started = performance.now();
    const projectDesired = desiredByProject.get(project) ?? [];
    const part = planProject(project, projectDesired, lists.get(project) ?? [], planOptions);
    parts.set(project, part);
    planningMs += performance.now() - started;
    projectsDone += 1;
    options.onProjectPlanned?.(part, projectDesired);
  };
  // A project whose every list is known is planned at once.
  for (const project of lists.keys()) if (!outstanding.has(project)) planned(project);

  const read = await mapConcurrent(refs, options.concurrency, async (ref): Promise<CurrentFamily> => {
    const records = await readFamily(client, ref).catch(async (error: unknown) => {
      if (!isMissingList(error, ref)) throw error;
      // The project's own key (file:line), where the user would fix the id.
      const first = desiredByProject.get(ref.project)?.[0];
      throw await explainMissingProject(client, ref, first?.projectSource ?? first?.source, error);
    });
    const family: CurrentFamily = { project: ref.project, family: ref.family, records };
    listsDone += 1;
    lists.set(ref.project, [...(lists.get(ref.project) ?? []), family]);
    const left = (outstanding.get(ref.project) ?? 1) - 1;
    outstanding.set(ref.project, left);
    if (left === 0) planned(ref.project);
    options.onProgress?.({ listsDone, lists: refs.length, projectsDone, projects: outstanding.size });
    return family;
  });

  const started = performance.now();
  const current: CurrentState = { families: [...given, ...read] };
  const result = computePlan(
    desired,
    current,
    { ...planOptions, refuseFamilyOnly: options.refuseFamilyOnly === true },
    parts,
  );
  planningMs += performance.now() - started;
  return { ...result, current, planningMs };
}

/** Not the 404 of a record read on the way. */
export function isMissingList(error: unknown, ref: FamilyRef): error is ServiceError<"api_error"> {
  return (
    isApiError(error, 404) &&
    error.method === "GET" &&
    error.path.endsWith(collectionPath(ref.project, ref.family))
  );
}

/**
 * A project's list answered 404: the project is unknown or invisible to the key, or (the project
 * list answers 404 too, before anything else answered) the base URL's path is wrong.
 */
export async function explainMissingProject(
  client: ApiClient,
  ref: FamilyRef,
  source: SourceLocation | undefined,
  error: ServiceError<"api_error">,
): Promise<PcsyncError> {
  const { base } = client;
  if (!client.hasSucceeded() && (await reachesProjectList(client)) === false) {
    return new InputError("invalid_base_url", {
      shown: base.display,
      reason: `${error.method} ${error.path} and GET ${base.prefix}/api/projects/ both answer 404, so the service's API is not under it; check its path: it is the service's root (with the path prefix it is mounted under, if any), and pcsync adds /api/projects/... itself`,
      source: base.source,
    });
  }
  return new InputError("project_not_found", {
    project: ref.project,
    where: source === undefined ? undefined : formatSource(source),
    server: base.display,
    failure: error.message,
  });
}
