// The shared first half of plan and apply: load the manifest, narrow it to --project/--family,
// read the current state, and compute the plan.

import type { Command } from "commander";
import { Option } from "commander";
import { type ApiClient, listProjects } from "../api/index.js";
import { readAndPlan as readAndPlanProjects } from "../apply/read-and-plan.js";
import { PcsyncError, UsageError } from "../errors.js";
import type { FamilyName } from "../families.js";
import type { DesiredState, SourceLocation } from "../manifest/types.js";
import { parseShard, selectShard } from "../plan/shard.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { describeGuard } from "../render/guard-message.js";
import { type ConnectionFlags, concurrencyOf, parsePositiveNumber } from "./connection.js";
import type { CliIo } from "./io.js";
import { familyOption, parseFamily } from "./options.js";
import { createProgress } from "./progress.js";

export interface ScopeFlags {
  project?: string[];
  family?: FamilyName[];
  maxDeletePercent?: string;
  shard?: string;
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
      ).default("30"),
    );
}

/** Narrows the desired state to the projects and families asked for; unknown names are usage errors. */
export function narrowDesiredState(desired: DesiredState, flags: ScopeFlags): DesiredState {
  // Parsed by the option already; checked again for callers that build the flags themselves.
  for (const family of flags.family ?? []) parseFamily(family);
  const projects = flags.project;
  const families = flags.family;
  if (projects) {
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
  if (families && selected.length === 0 && desired.families.length > 0) {
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

export class PlanError extends PcsyncError {
  constructor(readonly problems: string[]) {
    super(
      "plan_invalid",
      `the plan cannot be made:\n${problems.map((problem) => `  ${problem}`).join("\n")}`,
    );
  }
}

const CURRENT_PROJECT = "@current";

/**
 * `@current` is the key's first project: if the manifest also names that project by its id, the
 * two blocks would plan the same records twice (and one's prune could delete the other's
 * configs). One extra request, made only when a manifest mixes `@current` with other projects.
 */
async function refuseCurrentAlias(client: ApiClient, desired: DesiredState): Promise<void> {
  const alias = desired.families.find((family) => family.project === CURRENT_PROJECT);
  if (!alias || desired.families.every((family) => family.project === CURRENT_PROJECT)) return;
  const [first] = await listProjects(client);
  if (!first) return;
  const resolved = String(first.id);
  const named = desired.families.find((family) => family.project === resolved);
  if (!named) return;
  const where = (location: SourceLocation) => `${location.file}:${location.line}`;
  throw new PlanError([
    `${where(alias.source)}: project "${CURRENT_PROJECT}" is project ${resolved} for this API key, which the manifest also defines at ${where(named.source)}; keep one of the two`,
  ]);
}

export async function readAndPlan(
  client: ApiClient,
  desired: DesiredState,
  flags: ScopeFlags & ConnectionFlags,
  io: CliIo,
): Promise<{ plan: Plan; current: CurrentState }> {
  const maxDeletePercent = parsePositiveNumber(flags.maxDeletePercent ?? "30", "--max-delete-percent");
  await refuseCurrentAlias(client, desired);
  const progress = createProgress(io);
  const { plan, errors, current } = await readAndPlanProjects(client, desired, {
    concurrency: concurrencyOf(flags),
    plan: { maxDeletePercent, describeGuard },
    onProgress: (read) =>
      progress.update(
        "read",
        read.projectsDone,
        read.projects,
        `projects (${read.listsDone}/${read.lists} lists)`,
      ),
  });
  progress.finish();
  if (!plan) throw new PlanError(errors.map((error) => `${error.source}: ${error.message}`));
  return { plan: { ...plan, server: client.base.display }, current };
}
