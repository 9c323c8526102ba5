// `pcsync apply`: make the remote state equal to the manifest (or to a saved plan), verified,
// with a report of exactly what was done.

import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Command, Option } from "commander";
import type { ApiClient } from "../../api/index.js";
import { applyPlan } from "../../apply/apply-plan.js";
import { readCurrentState } from "../../apply/read-current-state.js";
import type { ApplyReport } from "../../apply/types.js";
import { EXIT_ERROR, EXIT_REFUSED, PcsyncError, UsageError } from "../../errors.js";
import { familiesTouchedBy, findStaleness } from "../../plan/check-stale.js";
import { parsePlanFile } from "../../plan/plan-file.js";
import type { CurrentState, Plan } from "../../plan/types.js";
import { renderApplyReport } from "../../render/apply-report.js";
import type { CommandRegistrar } from "../command-registrar.js";
import { APPLY_CANCELLED, ApplyCancelledError, applyQuestion, askForYes, canAsk } from "../confirm.js";
import {
  addConnectionOptions,
  type ConnectionFlags,
  concurrencyOf,
  createClientFromFlags,
} from "../connection.js";
import {
  type InterruptSignal,
  type InterruptWatch,
  SIGNAL_EXIT_CODES,
  watchInterrupts,
} from "../interrupt.js";
import { type CliIo, useColour } from "../io.js";
import { addManifestOption, loadManifestsOrThrow, type ManifestFlags } from "../manifest-options.js";
import {
  appendStepSummary,
  checkPlanPrintableAsJson,
  formatOption,
  hasChanges,
  parseFormat,
  printApplyJson,
  printPlan,
  warnGuards,
} from "../output.js";
import { createProgress } from "../progress.js";
import { addScopeOptions, narrowDesiredState, readAndPlan, type ScopeFlags } from "../reconcile.js";

interface ApplyFlags extends ConnectionFlags, ScopeFlags, ManifestFlags {
  file: string[];
  plan?: string;
  dryRun?: boolean;
  force?: boolean;
  autoApprove?: boolean;
  format?: string;
}

export class SafetyGuardError extends PcsyncError {
  constructor(messages: string[]) {
    super(
      "safety_guard",
      `refusing to apply:\n${messages.map((message) => `  ${message}`).join("\n")}\nNothing was changed.`,
      { exitCode: EXIT_REFUSED },
    );
  }
}

export class StalePlanError extends PcsyncError {
  constructor(file: string, reasons: string[]) {
    super(
      "stale_plan",
      `the saved plan ${file} is stale:\n${reasons.map((reason) => `  ${reason}`).join("\n")}\nNothing was changed. Make a new plan (\`pcsync plan -f <manifest> --out ${file}\`), review it, and apply that.`,
      { exitCode: EXIT_REFUSED },
    );
  }
}

export class PartialApplyError extends PcsyncError {
  constructor(report: ApplyReport) {
    const unknown = report.unknown > 0 ? `${report.unknown} unknown, ` : "";
    const unchecked = report.unchecked > 0 ? `, ${report.unchecked} unchecked` : "";
    const settle =
      report.unknown > 0 || report.unchecked > 0
        ? " Run `pcsync plan` first to see what the server holds where this run could not tell."
        : "";
    super(
      "apply_incomplete",
      `apply incomplete: ${report.failed} failed, ${report.skipped} skipped, ${unknown}${report.done} done${unchecked}. Fix the errors above and run apply again; it continues from where this run stopped.${settle}`,
      { exitCode: EXIT_ERROR },
    );
  }
}

/** Apply stopped by SIGINT or SIGTERM: the summary above says what was done and what was not started. */
export class InterruptedApplyError extends PcsyncError {
  constructor(report: ApplyReport, signal: InterruptSignal) {
    const notStarted = report.outcomes.filter((outcome) => outcome.notStarted === true).length;
    const unknown = report.unknown > 0 ? `, ${report.unknown} unknown` : "";
    super(
      "interrupted",
      `apply interrupted by ${signal}: ${report.done} done, ${notStarted} not started, ${report.failed} failed${unknown}. Run \`pcsync plan\` to see what is left, then apply again to finish.`,
      { exitCode: SIGNAL_EXIT_CODES[signal] },
    );
  }
}

function isComplete(report: ApplyReport): boolean {
  return (
    !report.interrupted &&
    report.failed === 0 &&
    report.skipped === 0 &&
    report.unknown === 0 &&
    report.unchecked === 0
  );
}

/**
 * After a partial apply the user must know exactly what already changed, not only how much: the
 * changes done are listed before the failures (a complete apply is the plan, so needs no list).
 */
function writeDoneOutcomes(report: ApplyReport, io: CliIo): void {
  if (isComplete(report)) return;
  const tick = useColour(io.stdout, io.env) ? "\u001b[32m✓ done\u001b[0m" : "✓ done";
  for (const outcome of report.outcomes) {
    if (outcome.status !== "done") continue;
    const name = outcome.name === null ? "(unnamed)" : JSON.stringify(outcome.name);
    const what = outcome.action === "reorder" ? "reorder" : `${outcome.action} ${name}`;
    const id = outcome.id === null ? "" : ` (id ${outcome.id})`;
    io.stdout.write(
      `${tick}: ${what}${id} in project ${outcome.project} ${outcome.family} (${outcome.source})\n`,
    );
  }
}

async function readSavedPlan(path: string, cwd: string): Promise<Plan> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), "utf8");
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === "ENOENT"
        ? "no such file; check the path, or save a plan with `pcsync plan --out FILE`"
        : (error as Error).message;
    throw new PcsyncError("plan_file_unreadable", `cannot read the plan file ${path}: ${reason}`);
  }
  return parsePlanFile(text, path);
}

/** The state changed between the plan shown and the user's "yes": the plan is no longer the truth. */
export class ChangedWhileAskingError extends PcsyncError {
  constructor(reasons: string[]) {
    super(
      "changed_while_asking",
      `the remote state changed while apply waited for your answer:\n${reasons.map((reason) => `  ${reason}`).join("\n")}\nNothing was changed. Run apply again to see the plan as it is now.`,
      { exitCode: EXIT_REFUSED },
    );
  }
}

/** Re-reads what a saved plan touches and refuses it if the world moved since it was made. */
async function checkSavedPlan(
  plan: Plan,
  path: string,
  client: ApiClient,
  flags: ApplyFlags,
  io: CliIo,
): Promise<{ plan: Plan; current: CurrentState }> {
  if (plan.server !== undefined && plan.server !== client.base.display) {
    throw new PcsyncError(
      "plan_server_mismatch",
      `the saved plan ${path} was made against ${plan.server}, not ${client.base.display}. Nothing was changed. Point --base-url (or PCSYNC_BASE_URL) at the plan's server, or make a new plan.`,
      { exitCode: EXIT_REFUSED },
    );
  }
  const { current, reasons } = await rereadForPlan(plan, client, flags, io);
  if (reasons.length > 0) throw new StalePlanError(path, reasons);
  return { plan, current };
}

/** Reads again what the plan touches: the state it will be applied to, and what changed since. */
async function rereadForPlan(
  plan: Plan,
  client: ApiClient,
  flags: ApplyFlags,
  io: CliIo,
): Promise<{ current: CurrentState; reasons: string[] }> {
  const refs = familiesTouchedBy(plan);
  // The project's plugin_configs list tells apply whether a rearrange is safe (see apply-plan).
  for (const reorder of plan.reorders) {
    if (!refs.some((ref) => ref.project === reorder.project && ref.family === "plugin_configs")) {
      refs.push({ project: reorder.project, family: "plugin_configs" });
    }
  }
  const progress = createProgress(io);
  const current = await readCurrentState(client, refs, {
    concurrency: concurrencyOf(flags),
    onProgress: (done, total) => progress.update("re-read", done, total, "lists"),
  });
  progress.finish();
  return { current, reasons: findStaleness(plan, current) };
}

/**
 * On a terminal, without --auto-approve: asks for `yes` after the plan was shown. A Ctrl-C at the
 * question cancels like any other answer but "yes" (exit 130, as for a signal before any write).
 * Then reads again what the plan touches: the answer may come minutes later, and the plan the
 * user approved is applied only if it still describes the service.
 */
async function confirmPlan(
  plan: Plan,
  client: ApiClient,
  flags: ApplyFlags,
  io: CliIo & { stdin: NonNullable<CliIo["stdin"]> },
  interrupts: InterruptWatch,
): Promise<CurrentState> {
  const { create, update, delete: deletes, reorder } = plan.summary;
  interrupts.setStopMessage(`\npcsync: ${APPLY_CANCELLED}\n`);
  let approved: boolean;
  try {
    approved = await askForYes(
      io.stdin,
      io.stderr,
      applyQuestion(create + update + deletes + reorder, client.base.display),
    );
  } finally {
    interrupts.setStopMessage(undefined);
  }
  if (!approved) throw new ApplyCancelledError();
  const { current, reasons } = await rereadForPlan(plan, client, flags, io);
  if (reasons.length > 0) throw new ChangedWhileAskingError(reasons);
  return current;
}

// These shaped the saved plan when it was made; accepting them beside --plan would silently
// ignore them, so that a user who thinks they narrowed the apply would apply everything.
const PLAN_SHAPING_OPTIONS = [
  ["file", "-f/--file"],
  ["var", "--var"],
  ["varFile", "--var-file"],
  ["project", "--project"],
  ["family", "--family"],
  ["shard", "--shard"],
  ["maxDeletePercent", "--max-delete-percent"],
] as const;

function refuseOptionsBesidePlan(command: Command): void {
  const given = PLAN_SHAPING_OPTIONS.filter(([key]) => command.getOptionValueSource(key) === "cli").map(
    ([, flag]) => flag,
  );
  if (given.length > 0) {
    throw new UsageError(
      `${given.join(", ")} cannot be combined with --plan: a saved plan is applied exactly as it was made. Give them to \`pcsync plan ... --out FILE\` instead, then apply that plan.`,
    );
  }
}

export const registerApplyCommand: CommandRegistrar = (program, io) => {
  const command = new Command("apply")
    .description("Make the remote state equal to the manifest, or carry out a saved plan.")
    .addOption(new Option("--plan <file>", "apply this saved plan (from `plan -o FILE`); refused if stale"))
    .addOption(new Option("--dry-run", "print the plan only; change nothing"))
    .addOption(new Option("--force", "override the safety guards (mass deletes, pruning to empty)"))
    .addOption(
      new Option(
        "--auto-approve",
        "do not ask for `yes` on a terminal (a saved plan, or stdin that is not a terminal, is never asked for)",
      ),
    )
    .addOption(formatOption());
  addManifestOption(command);
  addScopeOptions(command);
  addConnectionOptions(command, "plan-or-manifest");
  command.addHelpText(
    "after",
    `
On a terminal, apply shows the plan and asks "Apply N changes? (yes/no)"; only "yes" goes ahead,
anything else (or Ctrl-D) cancels with exit 1, Ctrl-C with exit 130, nothing changed.

Examples:
  $ pcsync apply -f pcsync.yaml
  $ pcsync apply -f pcsync.yaml --auto-approve   # no question, also on a terminal
  $ pcsync plan -o plan.json && pcsync apply --plan plan.json
  $ pcsync apply --dry-run --project 1
  $ PCSYNC_VAR_PROJECT_ID=42 pcsync apply   # \${PROJECT_ID} in the manifest reads PCSYNC_VAR_PROJECT_ID`,
  );
  const runApply = async (flags: ApplyFlags, self: Command, interrupts: InterruptWatch) => {
    const format = parseFormat(flags.format);
    if (flags.plan !== undefined) refuseOptionsBesidePlan(self);
    const asks = !flags.autoApprove && !flags.dryRun && flags.plan === undefined && canAsk(io.stdin);
    if (asks && format === "json") {
      throw new UsageError(
        "apply --format json prints no plan to say yes to: on a terminal, add --auto-approve, or apply a saved plan with --plan FILE",
      );
    }
    const saved = flags.plan === undefined ? undefined : await readSavedPlan(flags.plan, io.cwd);
    const desired = saved ? undefined : narrowDesiredState(await loadManifestsOrThrow(flags, io), flags);
    // A saved plan names its server: with no --base-url or PCSYNC_BASE_URL, that is where it goes
    // (the manifest's server.base_url that the plan was made with is not at hand here).
    const client = await createClientFromFlags(flags, io, {
      fallback: saved
        ? { baseUrl: saved.server, orElse: "make the plan again (this one names no server)" }
        : { baseUrl: desired?.baseUrl, orElse: "set server.base_url in the manifest" },
      signal: interrupts.signal,
    });
    try {
      const { plan, current } = await (saved !== undefined && flags.plan !== undefined
        ? checkSavedPlan(saved, flags.plan, client, flags, io)
        : readAndPlan(client, desired ?? { families: [] }, flags, io)
      ).catch((error: unknown) => {
        // Nothing is written before the plan stands: say so, for a user wondering what happened.
        if (error instanceof PcsyncError && !error.message.includes("Nothing was changed")) {
          error.message = `${error.message} Nothing was changed.`;
        }
        throw error;
      });
      if (format !== "json") printPlan(plan, format, io);
      else checkPlanPrintableAsJson(plan);
      // Without --force, a real apply refuses and its error lists the guards: no need to say it twice.
      if (flags.force || flags.dryRun) warnGuards(plan, io, flags.force === true);
      if (flags.dryRun) {
        if (format === "json") printPlan(plan, format, io);
        return;
      }
      if (plan.guards.length > 0 && !flags.force) {
        throw new SafetyGuardError(plan.guards.map((guard) => guard.message));
      }
      if (!hasChanges(plan)) {
        if (format === "json") printApplyJson(plan, null, io);
        return;
      }
      const stdin = io.stdin;
      const state =
        asks && stdin !== undefined
          ? await confirmPlan(plan, client, flags, { ...io, stdin }, interrupts)
          : current;
      const progress = createProgress(io);
      interrupts.beginWrites();
      const report = await applyPlan(client, plan, state, {
        concurrency: concurrencyOf(flags),
        onProgress: (done, total) => progress.update("applied", done, total, "changes"),
        signal: interrupts.signal,
      });
      progress.finish();
      if (format === "json") printApplyJson(plan, report, io);
      else {
        writeDoneOutcomes(report, io);
        renderApplyReport(report, io.stdout, { colour: useColour(io.stdout, io.env) });
      }
      const title = report.interrupted
        ? "pcsync apply (interrupted)"
        : isComplete(report)
          ? "pcsync apply"
          : "pcsync apply (incomplete)";
      await appendStepSummary(plan, io, title);
      if (interrupts.received !== undefined) throw new InterruptedApplyError(report, interrupts.received);
      if (!isComplete(report)) throw new PartialApplyError(report);
    } finally {
      await client.close();
    }
  };
  command.action(async (flags: ApplyFlags, self: Command) => {
    // Until the writes begin, a signal ends the run at once; after, it stops new writes only.
    const interrupts = watchInterrupts({ stderr: io.stderr });
    try {
      await runApply(flags, self, interrupts);
    } finally {
      interrupts.dispose();
    }
  });
  program.addCommand(command);
};
