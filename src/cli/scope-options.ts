// The scope, guard and targeting options of plan, apply and watch, and what they make for the use
// case that plans (src/run/plan-manifest.ts).

import type { Command } from "commander";
import { Option } from "commander";
import type { FamilyName } from "../families.js";
import { InputError } from "../input-error.js";
import { PLAN_DEFAULTS, type PlanOptions } from "../plan/compute-plan.js";
import type { PlanScope, PlanSettings } from "../run/plan-manifest.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf, parsePositiveNumber } from "./connection.js";
import { createProgress } from "./progress.js";
import { collect, familyOption } from "./shared-options.js";

export interface ScopeFlags {
  takeover?: boolean;
  project?: string[];
  family?: FamilyName[];
  /** Options with a default are always given. */
  maxDeletePercent: string;
  maxUpdatePercent: string;
  shard?: string;
  target?: string[];
  exclude?: string[];
  allowDestroy?: string[];
}

/** An empty glob is refused as it is parsed. */
function globOption(flags: string, description: string): Option {
  const flag = flags.split(" ")[0] ?? flags;
  return new Option(flags, description).argParser((value: string, previous: string[] | undefined) => {
    if (value.trim() === "") throw new InputError("usage", `${flag} needs a record name or a * glob, not ""`);
    return [...(previous ?? []), value];
  });
}

export function addScopeOptions(command: Command): Command {
  return command
    .option("--project <id>", "only this project (repeatable)", collect)
    .addOption(familyOption("only this family (repeatable)", { repeatable: true }))
    .option(
      "--shard <K/N>",
      "only the projects of worker K of N (stable hash of the project id), for CI matrices",
    )
    .option(
      "--max-delete-percent <n>",
      "refuse to prune more than this share of a family of 10+ records",
      String(PLAN_DEFAULTS.maxDeletePercent),
    )
    .option(
      "--max-update-percent <n>",
      "refuse to update more than this share of a family of 10+ records",
      String(PLAN_DEFAULTS.maxUpdatePercent),
    )
    .addOption(
      globOption(
        "--target <name>",
        "plan only the changes of records with this name (repeatable, * globs): a partial plan",
      ),
    )
    .addOption(
      globOption("--exclude <name>", "leave out the changes of records with this name (repeatable, * globs)"),
    )
    .addOption(
      globOption(
        "--allow-destroy <name>",
        "allow deleting this protected record (repeatable, * globs); --force does not lift protection",
      ),
    )
    .option(
      "--takeover",
      "with `owner:`, let configs claim records another owner marked (they get this manifest's mark)",
    );
}

export function guardLimitsOf(
  flags: ScopeFlags,
): Required<Pick<PlanOptions, "maxDeletePercent" | "maxUpdatePercent">> {
  return {
    maxDeletePercent: parsePositiveNumber(flags.maxDeletePercent, "--max-delete-percent"),
    maxUpdatePercent: parsePositiveNumber(flags.maxUpdatePercent, "--max-update-percent"),
  };
}

export function scopeOf(flags: ScopeFlags): PlanScope {
  return { project: flags.project, family: flags.family, shard: flags.shard };
}

export function planSettingsOf(flags: ScopeFlags & ConnectionFlags, io: CliIo): PlanSettings {
  const target = flags.target ?? [];
  const exclude = flags.exclude ?? [];
  const progress = createProgress(io);
  return {
    concurrency: concurrencyOf(flags),
    plan: {
      ...guardLimitsOf(flags),
      allowDestroy: flags.allowDestroy ?? [],
      ...(target.length > 0 || exclude.length > 0 ? { targets: { target, exclude } } : {}),
      takeover: flags.takeover === true,
    },
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
  };
}
