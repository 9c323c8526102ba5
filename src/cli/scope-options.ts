// The shared first half of plan and apply: the scope options, the manifest narrowed to them, and
// the read stage run with the flags' settings and a progress line.

import type { Command } from "commander";
import { Option } from "commander";
import { type ApiClient, listProjects } from "../api/index.js";
import { UsageError } from "../errors.js";
import type { FamilyName } from "../families.js";
import { type LoadedManifest, ManifestError, resolveProjectSets } from "../manifest/index.js";
import { didYouMean } from "../manifest/suggest.js";
import type { DesiredState } from "../manifest/types.js";
import { PLAN_DEFAULTS, type PlanDiagnostic } from "../plan/compute-plan.js";
import { parseShard, selectShard } from "../plan/shard.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { type ReadAndPlanOptions, readAndPlan } from "../read/read-and-plan.js";
import { matchesAnyGlob } from "../record-name.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf, parsePositiveNumber } from "./connection.js";
import { printDiagnostics } from "./manifest-options.js";
import { collect, familyOption, parseFamily } from "./options.js";
import { type OwnerFlags, ownerPlanOptions, takeoverOption } from "./owner-options.js";
import { createProgress } from "./progress.js";
import {
  allowDestroyOption,
  excludeOption,
  type SafetyFlags,
  safetyPlanOptions,
  targetOption,
} from "./safety-options.js";

export interface ScopeFlags extends SafetyFlags, OwnerFlags {
  project?: string[];
  family?: FamilyName[];
  maxDeletePercent?: string;
  shard?: string;
}

export function addScopeOptions(command: Command): Command {
  return command
    .addOption(new Option("--project <id>", "only this project (repeatable)").argParser(collect))
    .addOption(familyOption("only this family (repeatable)", { repeatable: true }))
    .addOption(
      new Option(
        "--shard <K/N>",
        "only the projects of worker K of N (stable hash of the project id), for CI matrices",
      ),
    )
    .addOption(
      new Option(
        "--max-delete-percent <n>",
        "refuse to prune more than this share of a family of 10+ records",
      ).default(String(PLAN_DEFAULTS.maxDeletePercent)),
    )
    .addOption(
      new Option(
        "--max-update-percent <n>",
        "refuse to update more than this share of a family of 10+ records",
      ).default(String(PLAN_DEFAULTS.maxUpdatePercent)),
    )
    .addOption(targetOption())
    .addOption(excludeOption())
    .addOption(allowDestroyOption())
    .addOption(takeoverOption());
}

/** Narrows the desired state to the projects and families asked for; unknown names are usage errors. */
export function narrowDesiredState<T extends LoadedManifest>(desired: T, flags: ScopeFlags): T {
  // Parsed by the option already; checked again for callers that build the flags themselves.
  for (const family of flags.family ?? []) parseFamily(family);
  const projects = flags.project;
  const families = flags.family;
  // With `projects: all` unresolved, a project may come from the listing: checked once it is read.
  const pending = desired.unresolved !== undefined;
  if (projects && !pending) {
    const known = new Set(desired.families.map((family) => family.project));
    const missing = projects.filter((project) => !known.has(project));
    if (missing.length > 0) {
      throw new UsageError(
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
    const scope = desired.families.filter(
      (family) => projects === undefined || projects.includes(family.project),
    );
    const present = [...new Set(scope.map((family) => family.family))];
    throw new UsageError(
      `--family ${families.join(", ")} selects nothing: the manifest${projects ? ` (project ${projects.join(", ")})` : ""} manages only ${present.join(", ")}`,
    );
  }
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  return {
    ...desired,
    families: shard ? selectShard(selected, shard, (family) => family.project) : selected,
  };
}

/**
 * Resolves `projects: all` from the API key's project listing (paged), only when a set says it;
 * problems that arise for a listed project are printed like manifest ones.
 */
async function resolveAllProjects(
  client: ApiClient,
  desired: LoadedManifest,
  io: CliIo,
): Promise<DesiredState> {
  const listed = await listProjects(client);
  const result = resolveProjectSets(
    desired,
    listed.map((project) => String(project.id)),
  );
  printDiagnostics({ ...result, value: undefined, files: [] }, io);
  if (result.value === undefined) throw new ManifestError(result.errors);
  return result.value;
}

/** --max-delete-percent, or the default: the share of a family a prune may delete. */
export function maxDeletePercentOf(flags: ScopeFlags): number {
  return flags.maxDeletePercent === undefined
    ? PLAN_DEFAULTS.maxDeletePercent
    : parsePositiveNumber(flags.maxDeletePercent, "--max-delete-percent");
}

/**
 * Reads and plans the narrowed manifest as the flags say, showing progress on a terminal; also
 * gives the desired state planned (with `projects: all` resolved from the listing).
 */
export async function planFromFlags(
  client: ApiClient,
  desired: LoadedManifest,
  flags: ScopeFlags & ConnectionFlags,
  io: CliIo,
  options: Pick<ReadAndPlanOptions, "refuseFamilyOnly" | "onProjectPlanned"> = {},
): Promise<{ plan: Plan; current: CurrentState; desired: DesiredState; refused: PlanDiagnostic[] }> {
  const maxDeletePercent = maxDeletePercentOf(flags);
  const safety = safetyPlanOptions(flags);
  const progress = createProgress(io);
  const { unresolved, ...named } = desired;
  // The planner sees resolved state only: the manifest's own projects, or those of the listing.
  const resolved: DesiredState =
    unresolved === undefined
      ? named
      : narrowDesiredState(await resolveAllProjects(client, desired, io), flags);
  const planned = await readAndPlan(client, resolved, {
    concurrency: concurrencyOf(flags),
    refuseFamilyOnly: options.refuseFamilyOnly === true,
    onProjectPlanned: options.onProjectPlanned,
    plan: { maxDeletePercent, ...safety, ...ownerPlanOptions(resolved, flags) },
    onProgress: (read) => {
      progress.update(
        "read",
        read.projectsDone,
        read.projects,
        `projects (${read.listsDone}/${read.lists} lists)`,
      );
      // Gone once every list is in, before anything is said about what was read.
      if (read.listsDone === read.lists) progress.finish();
    },
  });
  warnUnmatchedNames(flags, resolved, planned.current, io);
  return { ...planned, desired: resolved };
}

/**
 * A --target, --exclude or --allow-destroy that names no config of the manifest and no record read
 * is most likely a typo: a partial plan of nothing would say "No changes" and look like success.
 */
function warnUnmatchedNames(
  flags: SafetyFlags,
  desired: DesiredState,
  current: CurrentState,
  io: CliIo,
): void {
  const names = new Set<string>();
  for (const family of desired.families) for (const config of family.configs) names.add(config.fields.name);
  for (const family of current.families)
    for (const record of family.records) if (record.name !== null) names.add(record.name);
  const known = [...names];
  const given = [
    ...(flags.target ?? []).map((pattern) => ["--target", pattern] as const),
    ...(flags.exclude ?? []).map((pattern) => ["--exclude", pattern] as const),
    ...(flags.allowDestroy ?? []).map((pattern) => ["--allow-destroy", pattern] as const),
  ];
  for (const [flag, pattern] of given) {
    if (known.some(matchesAnyGlob([pattern]))) continue;
    io.stderr.write(
      `warning: ${flag} ${JSON.stringify(pattern)} matches no config of the manifest and no record read${didYouMean(pattern, known)}\n`,
    );
  }
}
