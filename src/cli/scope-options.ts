// The scope and planning options of plan, apply and watch, and what they make for the use case
// that plans (src/run/plan-manifest.ts): the scope, and the planner's settings with a progress line.

import type { Command } from "commander";
import { Option } from "commander";
import type { FamilyName } from "../families.js";
import { PLAN_DEFAULTS } from "../plan/compute-plan.js";
import type { PlanScope, PlanSettings } from "../run/plan-manifest.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf, parsePositiveNumber } from "./connection.js";
import { createProgress } from "./progress.js";
import {
  allowDestroyOption,
  excludeOption,
  type SafetyFlags,
  safetyPlanOptions,
  targetOption,
} from "./safety-options.js";
import { collect, familyOption } from "./shared-options.js";

export interface ScopeFlags extends SafetyFlags {
  /** --takeover: with `owner:`, configs may claim records another owner marked. */
  takeover?: boolean;
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
    .addOption(
      new Option(
        "--takeover",
        "with `owner:`, let configs claim records another owner marked (they get this manifest's mark)",
      ),
    );
}

/** --max-delete-percent, or the default: the share of a family a prune may delete. */
export function maxDeletePercentOf(flags: ScopeFlags): number {
  return flags.maxDeletePercent === undefined
    ? PLAN_DEFAULTS.maxDeletePercent
    : parsePositiveNumber(flags.maxDeletePercent, "--max-delete-percent");
}

/** The projects and families the flags narrow a run to. */
export function scopeOf(flags: ScopeFlags): PlanScope {
  return { project: flags.project, family: flags.family, shard: flags.shard };
}

/**
 * The planner's settings from the flags (each checked: a bad value is a usage error), with the
 * read's progress on a terminal.
 */
export function planSettingsOf(
  flags: ScopeFlags & ConnectionFlags,
  io: CliIo,
  options: Pick<PlanSettings, "refuseFamilyOnly" | "onProjectPlanned"> = {},
): PlanSettings {
  const maxDeletePercent = maxDeletePercentOf(flags);
  const { maxUpdatePercent, allowDestroy, targets } = safetyPlanOptions(flags);
  const progress = createProgress(io);
  return {
    concurrency: concurrencyOf(flags),
    plan: {
      maxDeletePercent,
      maxUpdatePercent,
      allowDestroy,
      ...(targets === undefined ? {} : { targets }),
      takeover: flags.takeover === true,
    },
    ...options,
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
