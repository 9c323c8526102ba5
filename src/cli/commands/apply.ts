// `pcsync apply`: make the remote state equal to the manifest (or to a saved plan), verified, with a
// report of exactly what was done.

import { dirname } from "node:path";
import type { Command } from "commander";
import { type RereadOptions, readSavedPlan } from "../../apply/check-saved-plan.js";
import { RunError } from "../../apply/run-error.js";
import { InputError } from "../../input-error.js";
import { checkMetricsFile } from "../../notify/metrics-file.js";
import type { Plan } from "../../plan/types.js";
import { RefusedError } from "../../refused-error.js";
import { isApplyComplete, renderApplyReport } from "../../render/apply-report.js";
import { checkRolloutFlags } from "../../rollout/rollout-flags.js";
import { applyPlanRun, type PlanSource } from "../../run/apply-plan-run.js";
import { manifestServer } from "../../run/connect.js";
import { type ManifestInput, runInputs } from "../../run/load-manifest.js";
import { loadManifestAndScope } from "../../run/plan-manifest.js";
import { endResumedJournal, type ResumeStart, startResume } from "../../run/resume-run.js";
import type { WebhookFlags } from "../../run/webhooks.js";
import { type CliIo, useColour } from "../cli-io.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { confirmChanges, refuseUnanswerable } from "../confirm.js";
import {
  addConnectionOptions,
  addSettleTimeoutOption,
  type ConnectionFlags,
  concurrencyOf,
  createClientFromFlags,
} from "../connection.js";
import { type InterruptWatch, withInterruptWatch } from "../interrupt.js";
import { applyJournaled, describeJournalNext, type JournalFlags, journalPathOf } from "../journal-run.js";
import { checkPlanPrintableAsJson, printApplyJson, printPlan, warnGuards } from "../print-plan.js";
import { createProgress } from "../progress.js";
import type { RolloutJson } from "../rollout-run.js";
import {
  addScopeOptions,
  guardLimitsOf,
  planSettingsOf,
  type ScopeFlags,
  scopeOf,
} from "../scope-options.js";
import { addManifestOption, collect, formatOption, type OutputFormat } from "../shared-options.js";
import { appendStepSummary } from "../step-summary.js";

interface ApplyFlags extends ConnectionFlags, ScopeFlags, ManifestInput, JournalFlags, WebhookFlags {
  plan?: string;
  resume?: boolean;
  dryRun?: boolean;
  force?: boolean;
  autoApprove?: boolean;
  format: OutputFormat;
  metricsFile?: string;
}

function rereadOptions(flags: ApplyFlags, io: CliIo): RereadOptions {
  const progress = createProgress(io);
  return {
    concurrency: concurrencyOf(flags),
    onProgress: (done, total) => {
      progress.update("re-read", done, total, "lists");
      // Gone once every list is in, before anything is said about what was read.
      if (done === total) progress.finish();
    },
  };
}

// These shaped the saved plan: accepted beside --plan, they would be silently ignored, and a user who
// thinks they narrowed the apply would apply everything.
const PLAN_SHAPING_OPTIONS = [
  "file",
  "var",
  "varFile",
  "project",
  "family",
  "shard",
  "target",
  "exclude",
  "takeover",
];

function refuseOptionsBesidePlan(command: Command): void {
  const given = command.options
    .filter((option) => PLAN_SHAPING_OPTIONS.includes(option.attributeName()))
    .filter((option) => command.getOptionValueSource(option.attributeName()) === "cli")
    .map((option) => [option.short, option.long].filter((flag) => flag !== undefined).join("/"));
  if (given.length > 0) {
    throw new InputError(
      "usage",
      `${given.join(", ")} cannot be combined with --plan: a saved plan is applied exactly as it was made. Give them to \`pcsync plan ... --out FILE\` instead, then apply that plan.`,
    );
  }
}

export const registerApplyCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "apply",
    "Make the remote state equal to the manifest, or carry out a saved plan.",
    `
On a terminal, apply shows the plan and asks "Apply N changes? (yes/no)"; only "yes" goes ahead,
anything else (or Ctrl-D) cancels with exit 1, Ctrl-C with exit 130, nothing changed.
Where stdin is not a terminal (CI, cron, ssh, make), apply refuses with exit 1 before reading
anything, unless --auto-approve, a saved plan (--plan FILE) or --dry-run.

Examples:
  $ pcsync apply -f pcsync.yaml
  $ pcsync apply -f pcsync.yaml --auto-approve   # no question, also on a terminal
  $ pcsync plan -o plan.json && pcsync apply --plan plan.json
  $ pcsync apply --plan plan.json --resume       # finish it after a kill, from its journal
  $ pcsync rollback --journal .pcsync/journal/2024-06-01T10-00-00.000Z-1a2b3c.jsonl
  $ pcsync apply --dry-run --project 1
  $ PCSYNC_VAR_PROJECT_ID=42 pcsync apply   # \${PROJECT_ID} in the manifest reads PCSYNC_VAR_PROJECT_ID`,
  )
    .option("--plan <file>", "apply this saved plan (from `plan -o FILE`); refused if stale")
    .option("--dry-run", "print the plan only; change nothing")
    .option(
      "--force",
      "override the safety guards (mass deletes or updates, pruning to empty); not protection",
    )
    .option(
      "--auto-approve",
      "apply without asking for `yes`; needed where stdin is not a terminal (CI, cron, ssh), unless --plan FILE or --dry-run",
    )
    .option(
      "--resume",
      "with --plan: finish the saved plan whose apply was interrupted, from that apply's journal",
    )
    .addOption(formatOption())
    .option(
      "--webhook <url>",
      "with rollout: in the manifest, POST each rollout event to this URL (repeatable)",
      collect,
    )
    .option(
      "--webhook-secret-file <path>",
      "sign each rollout event (X-Pcsync-Signature: sha256=HMAC of the body) with the secret in this file",
    )
    .option(
      "--metrics-file <path>",
      "with rollout: in the manifest, write the rollout's metrics here at each wave event (node_exporter textfile format)",
    )
    .option(
      "--journal <path>",
      "the journal of this apply (default .pcsync/journal/<UTC time>-<random>.jsonl); with --resume, the interrupted apply's",
    )
    .option("--no-journal", "keep no journal (the run cannot be rolled back or resumed)");
  // Both given, commander would keep the last: a run that asked for no journal could keep one.
  const journalFlags = new Set<string>();
  command.on("option:journal", () => journalFlags.add("--journal"));
  command.on("option:no-journal", () => journalFlags.add("--no-journal"));
  addManifestOption(command);
  addScopeOptions(command);
  addConnectionOptions(command, "plan-or-manifest");
  addSettleTimeoutOption(command);
  const runApply = async (flags: ApplyFlags, self: Command, interrupts: InterruptWatch) => {
    const { format } = flags;
    if (journalFlags.size > 1)
      throw new InputError("usage", "--journal PATH and --no-journal cannot go together: give one of them");
    if (flags.plan !== undefined) refuseOptionsBesidePlan(self);
    if (flags.resume && flags.plan === undefined)
      throw new InputError("usage", "--resume finishes a saved plan: give the plan with --plan FILE");
    if (flags.resume && flags.journal === false)
      throw new InputError(
        "usage",
        "--resume reads the interrupted apply's journal: it cannot go with --no-journal",
      );
    const asks = !flags.autoApprove && !flags.dryRun && flags.plan === undefined;
    if (asks)
      refuseUnanswerable(
        "apply",
        io.stdin,
        format,
        ", or apply a saved plan with --plan FILE (not for a manifest with rollout:)",
      );
    const saved = flags.plan === undefined ? undefined : await readSavedPlan(flags.plan, io.cwd);
    const scope = scopeOf(flags);
    const loaded = saved ? undefined : await loadManifestAndScope(flags, scope, io);
    const desired = loaded?.desired;
    checkRolloutFlags(
      // A saved plan never rolls out (a plan with waves is refused with --plan).
      desired?.rollout,
      { ...flags, scope, writes: flags.dryRun !== true, noJournal: flags.journal === false },
      (line) => io.stderr.write(`${line}\n`),
    );
    // A metrics file pcsync may not write is refused before anything is written; a later failure warns.
    if (desired?.rollout !== undefined && flags.metricsFile !== undefined && flags.dryRun !== true)
      await checkMetricsFile(flags.metricsFile, {
        cwd: io.cwd,
        inputs: runInputs(flags, { manifests: true }),
      });
    // A saved plan's server is only checked, never used: the API key goes to a server the user
    // named (--base-url or PCSYNC_BASE_URL), and a plan made against another one is refused.
    const client = await createClientFromFlags(flags, io, {
      fallback: saved
        ? {
            baseUrl: undefined,
            orElse: `to apply this plan, name the server it was made against (${saved.server ?? "it names none"}); the API key is never sent to a server read from a plan file`,
          }
        : manifestServer(desired),
      signal: interrupts.signal,
    });
    let resume: ResumeStart | undefined;
    try {
      // Holds the interrupted apply's journal from before it is read to the end of the run.
      if (flags.resume && saved !== undefined && flags.plan !== undefined)
        resume = await startResume(
          client,
          {
            saved,
            planFile: flags.plan,
            journal: journalPathOf(flags),
            cwd: io.cwd,
            reread: rereadOptions(flags, io),
          },
          (line) => io.stderr.write(`${line}\n`),
        );
      const source: PlanSource =
        saved !== undefined && flags.plan !== undefined
          ? {
              from: "saved",
              plan: saved,
              file: flags.plan,
              guards: guardLimitsOf(flags),
              allowDestroy: flags.allowDestroy ?? [],
              resumed: resume?.resumed,
            }
          : {
              from: "manifest",
              desired: desired ?? { families: [] },
              scope,
              settings: planSettingsOf(flags, io),
            };
      const forced = flags.force === true;
      const stdin = io.stdin;
      const inputs = runInputs(flags, { manifests: flags.plan === undefined, savedPlan: flags.plan });
      const end: { journal?: { lines: string; path: string }; rollout?: RolloutJson } = {};
      // The rollout's parts (webhooks, the gate) load only for a plan that rolls out.
      let rolloutRun: typeof import("../rollout-run.js") | undefined;
      // For the JSON document of a run refused after the plan was shown.
      let shown: Plan | undefined;
      let outcome: Awaited<ReturnType<typeof applyPlanRun>>;
      try {
        outcome = await applyPlanRun(
          client,
          {
            source,
            force: forced,
            dryRun: flags.dryRun === true,
            reread: rereadOptions(flags, io),
            journalDirectories: typeof flags.journal === "string" ? [dirname(flags.journal)] : [],
          },
          {
            show: (plan) => {
              shown = plan;
              if (format !== "json")
                printPlan(plan, format, io, { forced, verbose: flags.verbose === true, followed: true });
              else checkPlanPrintableAsJson(plan, io.secrets);
              // Without --force, a real apply refuses and its error lists the guards: no need to say it twice.
              if (forced || flags.dryRun) warnGuards(plan, io, forced);
            },
            hasMoreWork: async (plan, rolledOut) => {
              if (plan.rollout === undefined) return false;
              rolloutRun = await import("../rollout-run.js");
              return rolloutRun.hasUnfinishedRollout(client, rolledOut, plan, flags, io, loaded?.whole);
            },
            dryRunNotes: async (plan, rolledOut) => {
              if (plan.rollout === undefined) return;
              rolloutRun = await import("../rollout-run.js");
              await rolloutRun.noteLastRollout(client, rolledOut, plan, flags, io, loaded?.whole);
            },
            approve:
              asks && stdin !== undefined
                ? ({ summary }) =>
                    confirmChanges({ stdin, stderr: io.stderr }, interrupts, {
                      verb: "Apply",
                      changes: summary.create + summary.update + summary.delete + summary.reorder,
                      server: client.base.display,
                      what: "Apply",
                    })
                : undefined,
            apply: async (plan, state, rolledOut) =>
              plan.rollout !== undefined && rolledOut !== undefined && rolloutRun !== undefined
                ? rolloutRun.applyRollout({
                    client,
                    plan,
                    current: state,
                    rollout: plan.rollout,
                    desired: rolledOut,
                    flags,
                    io,
                    interrupts,
                    inputs,
                    whole: loaded?.whole,
                    onEnd: (rollout) => {
                      end.rollout = rollout;
                    },
                  })
                : applyJournaled(client, plan, state, {
                    flags,
                    io,
                    interrupts,
                    start: {
                      command: "apply",
                      planFile: flags.plan ?? null,
                      saved,
                    },
                    resumed: resume?.resumed?.journal,
                    lock: resume?.lock,
                    inputs,
                    endWith: (journal) => {
                      end.journal = journal;
                    },
                  }),
          },
          io,
        );
      } catch (error) {
        // Refused once the plan was made (a guard, a halt that holds): JSON still prints the plan and why.
        if (
          format === "json" &&
          shown !== undefined &&
          (error instanceof RefusedError ||
            (error instanceof RunError && error.code === "rollout_still_halted"))
        )
          printApplyJson(shown, null, io, undefined, error.message);
        throw error;
      }
      const { plan } = outcome;
      if (outcome.result === "dry_run") {
        if (format === "json") printPlan(plan, format, io);
        return;
      }
      if (outcome.result === "nothing") {
        if (format === "json") printApplyJson(plan, null, io);
        const resumed = resume?.resumed;
        if (resumed) {
          const journal = await endResumedJournal(resumed.journal, outcome.current, {
            cwd: io.cwd,
            inputs: runInputs(flags, { manifests: false, savedPlan: flags.plan }),
            secrets: io.secrets,
          });
          io.stderr.write(describeJournalNext(journal, { command: "apply", planFile: null }));
        }
        return;
      }
      const { report } = outcome;
      const journal = end.journal?.path;
      const journalLines = end.journal?.lines;
      if (format === "json") printApplyJson(plan, report, io, end.rollout);
      else renderApplyReport(report, io.stdout, { colour: useColour(io.stdout, io.env), journal });
      const title = report.interrupted
        ? "pcsync apply (interrupted)"
        : isApplyComplete(report)
          ? "pcsync apply"
          : "pcsync apply (incomplete)";
      // A rollout's run wrote its own, with how it ended.
      if (end.rollout === undefined) await appendStepSummary(plan, io, title, { forced, report });
      // The journal's lines end the output: after the report, and after the error if there is one.
      if (interrupts.received !== undefined)
        throw new RunError("interrupted", { report, signal: interrupts.received, journal: journalLines });
      // Two owners claimed one record at once and the other's mark won.
      const lostClaims = report.outcomes.filter((outcome) => outcome.ownerLost !== undefined);
      if (lostClaims.length > 0) {
        if (journalLines !== undefined) io.stderr.write(journalLines);
        throw new RefusedError("owner_claim_lost", {
          problems: lostClaims.map(
            (outcome) =>
              `record ${outcome.id} (${JSON.stringify(outcome.name)}) in project ${outcome.project} ${outcome.family}: ${outcome.message ?? "another owner's mark won"}`,
          ),
        });
      }
      if (!isApplyComplete(report)) throw new RunError("apply_incomplete", { report, journal: journalLines });
      if (journalLines !== undefined) io.stderr.write(journalLines);
    } finally {
      await resume?.lock?.release();
      await client.close();
    }
  };
  return command.action((flags: ApplyFlags, self: Command) =>
    withInterruptWatch(io.stderr, (interrupts) => runApply(flags, self, interrupts)),
  );
};
