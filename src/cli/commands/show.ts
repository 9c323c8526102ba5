// `pcsync show PLAN`: prints a plan saved by `plan --out` as `plan` printed it, in any format, as
// `terraform show` does. Reads no server.

import { readSavedPlan } from "../../apply/check-saved-plan.js";
import { EXIT_CHANGES } from "../../errors.js";
import { hasChanges } from "../../plan/plan-file.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { printPlan } from "../print-plan.js";
import { formatOption, type OutputFormat } from "../shared-options.js";

interface ShowFlags {
  format: OutputFormat;
  detailedExitcode?: boolean;
  verbose?: boolean;
}

export const registerShowCommand: CommandRegistrar = (io, setExit) => {
  return newCommand(
    "show",
    "Print a plan saved with `plan --out FILE`, as plan printed it (reads no server).",
    `
Examples:
  $ pcsync show plan.json
  $ pcsync show plan.json --format markdown > plan.md   # a pull-request comment
  $ pcsync show plan.json --format json | jq .summary`,
  )
    .argument("<plan>", "the saved plan file (JSON, from `pcsync plan --out`)")
    .addOption(formatOption())
    .option("--detailed-exitcode", "exit 0 when the plan has no changes, 2 when it has, 1 on error")
    .option("-v, --verbose", "show every order tie in full")
    .action(async (path: string, flags: ShowFlags) => {
      const plan = await readSavedPlan(path, io.cwd);
      printPlan(plan, flags.format, io, { verbose: flags.verbose === true });
      if (flags.detailedExitcode && hasChanges(plan)) setExit(EXIT_CHANGES);
    });
};
