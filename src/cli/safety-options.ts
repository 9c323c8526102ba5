// The safety options of plan and apply (and watch): the update guard's share, targeting
// (--target/--exclude) and --allow-destroy, parsed once into the planner's options.

import { Option } from "commander";
import { InputError } from "../input-error.js";
import { PLAN_DEFAULTS, type PlanOptions } from "../plan/compute-plan.js";
import { parsePositiveNumber } from "./connection.js";

export interface SafetyFlags {
  maxUpdatePercent?: string;
  target?: string[];
  exclude?: string[];
  allowDestroy?: string[];
}

/** A repeatable option of record-name globs; an empty one is refused as it is parsed. */
function globOption(flags: string, description: string): Option {
  const flag = flags.split(" ")[0] ?? flags;
  return new Option(flags, description).argParser((value: string, previous: string[] | undefined) => {
    if (value.trim() === "") throw new InputError("usage", `${flag} needs a record name or a * glob, not ""`);
    return [...(previous ?? []), value];
  });
}

export const targetOption = () =>
  globOption(
    "--target <name>",
    "plan only the changes of records with this name (repeatable, * globs): a partial plan",
  );

export const excludeOption = () =>
  globOption("--exclude <name>", "leave out the changes of records with this name (repeatable, * globs)");

export const allowDestroyOption = () =>
  globOption(
    "--allow-destroy <name>",
    "allow deleting this protected record (repeatable, * globs); --force does not lift protection",
  );

/** The planner's safety options from the flags. */
export function safetyPlanOptions(
  flags: SafetyFlags,
): Required<Pick<PlanOptions, "maxUpdatePercent" | "allowDestroy">> & Pick<PlanOptions, "targets"> {
  const maxUpdatePercent =
    flags.maxUpdatePercent === undefined
      ? PLAN_DEFAULTS.maxUpdatePercent
      : parsePositiveNumber(flags.maxUpdatePercent, "--max-update-percent");
  const target = flags.target ?? [];
  const exclude = flags.exclude ?? [];
  return {
    maxUpdatePercent,
    allowDestroy: flags.allowDestroy ?? [],
    ...(target.length > 0 || exclude.length > 0 ? { targets: { target, exclude } } : {}),
  };
}
