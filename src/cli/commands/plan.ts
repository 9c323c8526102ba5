// `pcsync plan`: read the current state and print what apply would change.

import { EXIT_CHANGES } from "../../errors.js";
import { resolveOutputTarget } from "../../files/output-target.js";
import { hasChanges } from "../../plan/plan-file.js";
import { RefusedError } from "../../refused-error.js";
import { describeGuard } from "../../render/guard-message.js";
import { manifestServer } from "../../run/connect.js";
import { type ManifestInput, runInputs } from "../../run/load-manifest.js";
import { loadManifestAndScope, planManifest } from "../../run/plan-manifest.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { addConnectionOptions, type ConnectionFlags, createClientFromFlags } from "../connection.js";
import { printPlan, savePlan, warnGuards, writeNotices } from "../print-plan.js";
import { addScopeOptions, planSettingsOf, type ScopeFlags, scopeOf } from "../scope-options.js";
import { addManifestOption, formatOption, type OutputFormat, outOption } from "../shared-options.js";
import { appendStepSummary } from "../step-summary.js";

interface PlanFlags extends ConnectionFlags, ScopeFlags, ManifestInput {
  format: OutputFormat;
  out?: string;
  detailedExitcode?: boolean;
}

export const registerPlanCommand: CommandRegistrar = (io, setExit) => {
  const command = newCommand(
    "plan",
    "Read the current state and show what apply would change (a dry run).",
    `
Examples:
  $ pcsync plan -f pcsync.yaml
  $ pcsync plan --project 1 --format markdown -o plan.json
  $ pcsync plan --detailed-exitcode   # in cron: exit 2 means drift
  $ pcsync plan --var-file prod.vars.yaml --var PROJECT_ID=42   # values for \${NAME} in the manifest`,
  )
    .addOption(formatOption())
    .addOption(outOption("also save the plan as JSON to this file, for `apply --plan`"))
    .option("--detailed-exitcode", "exit 0 when there are no changes, 2 when there are, 1 on error");
  addManifestOption(command);
  addScopeOptions(command);
  addConnectionOptions(command, "manifest");
  return command.action(async (flags: PlanFlags) => {
    const scope = scopeOf(flags);
    const { desired, whole } = await loadManifestAndScope(flags, scope, io);
    // Relative to the command's working directory, as the manifest paths are; refused before any request.
    const inputs = runInputs(flags, { manifests: true });
    if (flags.out) await resolveOutputTarget(flags.out, { cwd: io.cwd, inputs });
    const client = await createClientFromFlags(flags, io, {
      fallback: manifestServer(desired),
    });
    try {
      const { plan } = await planManifest(client, desired, scope, planSettingsOf(flags, io), io);
      // What apply will do with the manifest's last rollout (a halt that holds, one to finish): said
      // with the plan, which would otherwise look like a fresh rollout's.
      const notice =
        plan.rollout === undefined
          ? undefined
          : await (await import("../../rollout/last-rollout.js")).rolloutNotice(
              client,
              desired,
              plan,
              io.cwd,
              undefined,
              whole,
            );
      const notices = notice === undefined ? [] : [notice];
      printPlan(plan, flags.format, io, { verbose: flags.verbose === true, notices });
      writeNotices(notices, io);
      // A delete of a protected record is refused already here (exit 3), the others at apply.
      const protectedDeletes = plan.guards.filter((guard) => guard.rule === "protected");
      warnGuards({ ...plan, guards: plan.guards.filter((guard) => guard.rule !== "protected") }, io, false);
      await appendStepSummary(plan, io, "pcsync plan", { notices });
      if (protectedDeletes.length > 0) {
        throw new RefusedError("safety_guard", {
          messages: protectedDeletes.map((guard) => describeGuard(guard)),
          lead: "refusing the plan: it deletes protected records",
        });
      }
      if (flags.out) await savePlan(plan, flags.out, io, inputs);
      if (flags.detailedExitcode && hasChanges(plan)) setExit(EXIT_CHANGES);
    } finally {
      await client.close();
    }
  });
};
