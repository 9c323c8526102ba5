// The first half of plan, apply, watch's cycles and a rollout's waves: the manifest loaded and
// narrowed to the scope asked for, then read and planned (the one planning path, src/read).

import { type ApiClient, listProjects } from "../api/index.js";
import type { FamilyName } from "../families.js";
import { InputError } from "../input-error.js";
import { type LoadedManifest, resolveProjectSets } from "../manifest/index.js";
import { didYouMean } from "../manifest/suggest.js";
import type { DesiredState } from "../manifest/types.js";
import type { PlanDiagnostic, PlanOptions } from "../plan/compute-plan.js";
import { parseShard, selectShard } from "../plan/shard.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { type ReadAndPlanOptions, type ReadProgressCounts, readAndPlan } from "../read/read-and-plan.js";
import { matchesAnyGlob } from "../record-name.js";
import { loadManifestOrThrow, type ManifestInput, printDiagnostics } from "./load-manifest.js";
import type { RunIo } from "./run-io.js";

export interface PlanScope {
  project?: string[] | undefined;
  family?: FamilyName[] | undefined;
  /** `K/N`: the projects of worker K of N. */
  shard?: string | undefined;
}

export interface PlanSettings {
  concurrency: number;
  plan: Pick<PlanOptions, "maxDeletePercent" | "maxUpdatePercent" | "allowDestroy" | "targets" | "takeover">;
  /** A config that matches another owner's record refuses its family only (watch). */
  refuseFamilyOnly?: boolean | undefined;
  onProjectPlanned?: ReadAndPlanOptions["onProjectPlanned"];
  onProgress?: ((counts: ReadProgressCounts) => void) | undefined;
  /** ReadAndPlanOptions.known. */
  known?: CurrentState | undefined;
  /**
   * A part of a plan made earlier, planned again (a rollout's wave after its writes): its names were
   * checked against the whole manifest and every record read then, not against this part's.
   */
  partOfAnotherPlan?: boolean | undefined;
}

export interface PlannedManifest {
  plan: Plan;
  current: CurrentState;
  /** `projects: all` resolved from the listing. */
  desired: DesiredState;
  /** With `refuseFamilyOnly`: the owner conflicts, each refusing its family. */
  refused: PlanDiagnostic[];
}

/** Narrowed, also the whole manifest with the flags in words: a halt of its rollout holds for both. */
export async function loadManifestAndScope(
  input: ManifestInput,
  scope: PlanScope,
  io: RunIo,
): Promise<{ desired: LoadedManifest; whole?: { desired: LoadedManifest; narrowedBy: string } }> {
  const loaded = await loadManifestOrThrow(input, io);
  const desired = narrowDesiredState(loaded, scope);
  const narrowedBy = narrowingFlags(scope);
  return narrowedBy === undefined ? { desired } : { desired, whole: { desired: loaded, narrowedBy } };
}

/** Unknown names are usage errors. */
export function narrowDesiredState<T extends LoadedManifest>(desired: T, scope: PlanScope): T {
  const { project: projects, family: families } = scope;
  // With `projects: all` unresolved, a project may come from the listing: checked once it is read.
  const pending = desired.unresolved !== undefined;
  if (projects && !pending) {
    const known = new Set(desired.families.map((family) => family.project));
    const missing = projects.filter((project) => !known.has(project));
    if (missing.length > 0) {
      throw new InputError(
        "usage",
        `--project ${missing.join(", ")}: not in the manifest (it has ${[...known].join(", ") || "no projects"})`,
      );
    }
  }
  const selected = desired.families.filter(
    (family) =>
      (projects === undefined || projects.includes(family.project)) &&
      (families === undefined || families.includes(family.family)),
  );
  if (families && !pending && selected.length === 0 && desired.families.length > 0) {
    // Planning nothing would print "No changes" and exit 0: a drift check that checks nothing.
    const scoped = desired.families.filter(
      (family) => projects === undefined || projects.includes(family.project),
    );
    const present = [...new Set(scoped.map((family) => family.family))];
    throw new InputError(
      "usage",
      `--family ${families.join(", ")} selects nothing: the manifest${projects ? ` (project ${projects.join(", ")})` : ""} manages only ${present.join(", ")}`,
    );
  }
  const shard = scope.shard === undefined ? undefined : parseShard(scope.shard);
  return {
    ...desired,
    families: shard ? selectShard(selected, shard, (family) => family.project) : selected,
  };
}

/** Prints nothing (the run's own plan prints its problems); undefined where it cannot be resolved. */
export async function resolveSilently(
  client: ApiClient,
  desired: LoadedManifest,
): Promise<DesiredState | undefined> {
  if (desired.unresolved === undefined) return desired;
  return (await resolveFromListing(client, desired)).value;
}

async function resolveFromListing(client: ApiClient, desired: LoadedManifest) {
  const listed = await listProjects(client);
  return resolveProjectSets(
    desired,
    listed.map((project) => String(project.id)),
  );
}

/** Problems of a listed project are printed like manifest ones. */
async function resolveAllProjects(
  client: ApiClient,
  desired: LoadedManifest,
  io: RunIo,
): Promise<DesiredState> {
  const result = await resolveFromListing(client, desired);
  printDiagnostics({ ...result, value: undefined, files: [] }, io);
  if (result.value === undefined) throw new InputError("manifest_invalid", { diagnostics: result.errors });
  return result.value;
}

export async function planManifest(
  client: ApiClient,
  desired: LoadedManifest,
  scope: PlanScope,
  settings: PlanSettings,
  io: RunIo,
): Promise<PlannedManifest> {
  const { unresolved, ...named } = desired;
  // The planner sees resolved state only: the manifest's own projects, or those of the listing.
  const resolved: DesiredState =
    unresolved === undefined
      ? named
      : narrowDesiredState(await resolveAllProjects(client, desired, io), scope);
  const planned = await readAndPlan(client, resolved, {
    concurrency: settings.concurrency,
    refuseFamilyOnly: settings.refuseFamilyOnly === true,
    onProjectPlanned: settings.onProjectPlanned,
    plan: { ...settings.plan, owner: resolved.owner?.name },
    ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
    known: settings.known,
  });
  if (settings.partOfAnotherPlan !== true)
    warnUnmatchedNames(settings.plan, resolved, planned.current, io, narrowingFlags(scope));
  return { ...planned, desired: resolved };
}

/** In words: `--project, --shard 1/4`. */
export function narrowingFlags(scope: PlanScope): string | undefined {
  const flags = [
    ...(scope.project === undefined ? [] : ["--project"]),
    ...(scope.shard === undefined ? [] : [`--shard ${scope.shard}`]),
    ...(scope.family === undefined ? [] : ["--family"]),
  ];
  return flags.length === 0 ? undefined : flags.join(", ");
}

/**
 * A --target, --exclude or --allow-destroy that names no config of the manifest and no record read
 * is most likely a typo: a partial plan of nothing would say "No changes" and look like success.
 */
function warnUnmatchedNames(
  options: PlanSettings["plan"],
  desired: DesiredState,
  current: CurrentState,
  io: RunIo,
  narrowed: string | undefined,
): void {
  const names = new Set<string>();
  for (const family of desired.families) for (const config of family.configs) names.add(config.fields.name);
  for (const family of current.families)
    for (const record of family.records) if (record.name !== null) names.add(record.name);
  const known = [...names];
  const given = [
    ...(options.targets?.target ?? []).map((pattern) => ["--target", pattern] as const),
    ...(options.targets?.exclude ?? []).map((pattern) => ["--exclude", pattern] as const),
    ...(options.allowDestroy ?? []).map((pattern) => ["--allow-destroy", pattern] as const),
  ];
  for (const [flag, pattern] of given) {
    if (known.some(matchesAnyGlob([pattern]))) continue;
    io.stderr.write(
      `warning: ${flag} ${JSON.stringify(pattern)} matches no config of the manifest and no record read${narrowed === undefined ? "" : ` in this run's scope (${narrowed})`}${didYouMean(pattern, known)}\n`,
    );
  }
}
