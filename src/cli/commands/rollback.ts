// `pcsync rollback --journal PATH`: undoes the apply (or rollback) that wrote the journal, with its
// own journal, so that it can be undone in turn. Approval as for apply.

import { Option } from "commander";
import type { ApiClient } from "../../api/index.js";
import { RunError } from "../../apply/run-error.js";
import { describeStoredDescription, descriptionOwner } from "../../description-view.js";
import type { RunInput } from "../../files/output-target.js";
import { InputError } from "../../input-error.js";
import { describeRecordAt, type RollbackConflict } from "../../journal/plan-rollback.js";
import { hasChanges } from "../../plan/plan-file.js";
import { plural } from "../../plural.js";
import { RefusedError } from "../../refused-error.js";
import { isApplyComplete, renderApplyReport } from "../../render/apply-report.js";
import { describeProjects } from "../../rollout/run-rollout.js";
import { isRolloutJournal, recordWaveUndone, rolloutToUndo } from "../../rollout/undo-rollout.js";
import { type RollbackOutcome, rollBackJournal } from "../../run/rollback-journal.js";
import { shellWord } from "../../shell-word.js";
import { useColour } from "../cli-io.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { canAsk, confirmChanges, refuseUnanswerable } from "../confirm.js";
import {
  addConnectionOptions,
  addSettleTimeoutOption,
  type ConnectionFlags,
  concurrencyOf,
  createClientFromFlags,
} from "../connection.js";
import { type InterruptWatch, withInterruptWatch } from "../interrupt.js";
import { applyJournaled } from "../journal-run.js";
import { checkPlanPrintableAsJson, printApplyJson, printPlan, savePlan } from "../print-plan.js";
import { formatOption, type OutputFormat, outOption } from "../shared-options.js";
import { appendStepSummary } from "../step-summary.js";

interface RollbackFlags extends ConnectionFlags {
  journal: string;
  dryRun?: boolean;
  autoApprove?: boolean;
  force?: boolean;
  format: OutputFormat;
  out?: string;
}

/** A description shows its owner mark when either side carries one: the mark may be the difference. */
function describeConflicts(conflicts: readonly RollbackConflict[]): string[] {
  return conflicts.map((conflict) => {
    if (conflict.field === "record") return `${describeRecordAt(conflict)} was changed since`;
    if (conflict.field === "owner")
      return `${describeRecordAt(conflict)} carries owner "${conflict.now}"'s mark now, not the run's owner "${conflict.left.join("")}": it is that owner's record`;
    const withMark =
      conflict.field === "description" &&
      [conflict.now, ...conflict.left].some((value) => descriptionOwner(value) !== null);
    const show = (value: unknown) =>
      value === undefined ? "absent" : withMark ? describeStoredDescription(value) : JSON.stringify(value);
    return `${describeRecordAt(conflict)}: ${conflict.field} is ${show(conflict.now)} now; the run left ${conflict.left.map(show).join(" or ")}`;
  });
}

/** The files a rollback reads: its outputs (-o, its own journal) may not be one of them. */
function rollbackInputs(flags: RollbackFlags): RunInput[] {
  return [
    { path: flags.journal, what: "the journal (--journal)" },
    ...(flags.apiKeyFile === undefined ? [] : [{ path: flags.apiKeyFile, what: "the API key file" }]),
  ];
}

function refuseRollback(outcome: Extract<RollbackOutcome, { result: "refused" }>): never {
  const journal = outcome.journal.path;
  // --force or not: names are never given to two live records.
  if (outcome.clashes.length > 0)
    throw new RefusedError("rollback_name_taken", { journal, clashes: outcome.clashes });
  throw new RefusedError("rollback_conflict", { journal, conflicts: describeConflicts(outcome.conflicts) });
}

const NOTHING_TO_ROLL_BACK = "Nothing to roll back: every record the run touched is as it was before it.";

export const registerRollbackCommand: CommandRegistrar = (io) => {
  const command = newCommand(
    "rollback",
    "Undo the apply (or rollback, or rollout) that wrote a journal.",
    `
Records the run deleted come back (with their ids where the service still has the row, else
created again), fields it changed get their old values, order included, records it created are
deleted. A record changed since the run by anyone is refused (exit 3) unless --force. The
rollback keeps its own journal (named at the end), so it can be undone in turn; rolling back the
same journal again changes nothing. The server must be given (--base-url or PCSYNC_BASE_URL) and be
the journal's.

Given a rollout's journal (.pcsync/rollout/), it undoes the whole rollout once it has ended: the
waves still written, newest first, each through its own journals as above; each wave undone is
recorded there, so running it again goes on where it stopped.

Examples:
  $ pcsync rollback --journal .pcsync/journal/2024-06-01T10-00-00.000Z-1a2b3c.jsonl --dry-run
  $ pcsync rollback --journal .pcsync/journal/2024-06-01T10-00-00.000Z-1a2b3c.jsonl
  $ pcsync rollback --journal journal.jsonl --auto-approve --format json   # in CI
  $ pcsync rollback --journal .pcsync/rollout/2024-06-01T10-00-00.000Z-4d5e6f.jsonl --dry-run`,
  )
    .addOption(new Option("--journal <path>", "the journal of the run to undo").makeOptionMandatory())
    .option("--dry-run", "print the rollback's plan only; change nothing")
    .option("--auto-approve", "do not ask for `yes` (needed where stdin is not a terminal)")
    .option("--force", "put back the journal's values also over changes made since the run")
    .addOption(formatOption())
    .addOption(outOption("also save the rollback's plan as JSON to this file"));
  addConnectionOptions(command, "none");
  addSettleTimeoutOption(command);
  // `again`: the journal whose rollback, run again, finishes this one (a rollout's, for its waves').
  // `before`: what was undone before this rollback (a rollout's newer waves), said if it is cancelled.
  const runRollback = async (
    flags: RollbackFlags,
    interrupts: InterruptWatch,
    again = flags.journal,
    before?: string,
  ) => {
    const { format } = flags;
    if (!flags.autoApprove && !flags.dryRun) refuseUnanswerable("rollback", io.stdin, format);
    let client: ApiClient | undefined;
    const end: { journal?: { lines: string; path: string } } = {};
    const stdin = io.stdin;
    try {
      const outcome = await rollBackJournal(
        {
          journal: flags.journal,
          cwd: io.cwd,
          force: flags.force === true,
          concurrency: concurrencyOf(flags),
          dryRun: flags.dryRun === true,
        },
        {
          connect: async () => {
            client = await createClientFromFlags(flags, io, { signal: interrupts.signal });
            return client;
          },
          onNote: (line) => io.stderr.write(`${line}\n`),
          onUnlockable: (message) =>
            io.stderr.write(`warning: ${message}; rolling back without holding it\n`),
          show: async (shown) => {
            if (shown.conflicts.length > 0)
              io.stderr.write(
                `warning: --force puts back the journal's values over ${plural(shown.conflicts.length, "change")} made since the run\n`,
              );
            const { plan } = shown;
            // An empty plan says nothing of a manifest: "Nothing to roll back" follows instead.
            if (format !== "json" && hasChanges(plan)) printPlan(plan, format, io, { followed: true });
            else checkPlanPrintableAsJson(plan, io.secrets);
            if (flags.out) await savePlan(plan, flags.out, io, rollbackInputs(flags));
          },
          approve:
            flags.autoApprove || !canAsk(stdin)
              ? undefined
              : ({ plan: { summary } }, client) =>
                  confirmChanges({ stdin, stderr: io.stderr }, interrupts, {
                    verb: "Roll back with",
                    changes: summary.create + summary.update + summary.delete,
                    server: client.base.display,
                    what: "Rollback",
                    before,
                  }),
          apply: (run) =>
            applyJournaled(run.client, run.plan, run.current, {
              // --journal names the journal undone; the rollback's own goes where an apply's would.
              flags: { ...flags, journal: undefined },
              io,
              interrupts,
              start: run.start,
              alsoKnown: run.alsoKnown,
              inputs: rollbackInputs(flags),
              endWith: (journal) => {
                end.journal = journal;
              },
            }),
        },
      );
      if (outcome.result === "refused") refuseRollback(outcome);
      const { plan } = outcome.state;
      if (outcome.result === "shown") {
        if (format === "json") printPlan(plan, format, io);
        else if (!hasChanges(plan)) io.stdout.write(`${NOTHING_TO_ROLL_BACK}\n`);
        await appendStepSummary(plan, io, "pcsync rollback (dry run)");
        return;
      }
      if (outcome.result === "nothing") {
        await appendStepSummary(plan, io, "pcsync rollback");
        if (format === "json") printApplyJson(plan, null, io);
        else io.stdout.write(`${NOTHING_TO_ROLL_BACK}\n`);
        return;
      }
      const { report } = outcome;
      if (format === "json") printApplyJson(plan, report, io);
      else
        renderApplyReport(report, io.stdout, {
          colour: useColour(io.stdout, io.env),
          command: "rollback",
          journal: end.journal?.path,
        });
      await appendStepSummary(
        plan,
        io,
        isApplyComplete(report) ? "pcsync rollback" : "pcsync rollback (incomplete)",
        { report, command: "rollback" },
      );
      const words = {
        command: "rollback",
        again: `run pcsync rollback --journal ${shellWord(again)} again`,
      } as const;
      // The journal's lines end the output: after the report, and after the error if there is one.
      const lines = end.journal?.lines;
      if (interrupts.received !== undefined)
        throw new RunError("interrupted", { report, signal: interrupts.received, words, journal: lines });
      if (!isApplyComplete(report)) throw new RunError("apply_incomplete", { report, words, journal: lines });
      if (lines !== undefined) io.stderr.write(lines);
    } finally {
      await client?.close();
    }
  };
  // A rollout's journal: its waves still written are undone newest first, each through its own
  // journals as above (approved, refused or stopped the same way); each wave undone is recorded in
  // the rollout's journal, so that running this again goes on from where it stopped.
  const runRolloutRollback = async (flags: RollbackFlags, interrupts: InterruptWatch) => {
    if (flags.format === "json" || flags.out !== undefined)
      throw new InputError(
        "usage",
        `${flags.journal} is a rollout's journal, which rollback undoes wave by wave: --format json and -o take one apply's journal. Leave them out, or roll back the waves' journals one by one (\`pcsync rollback --journal ${shellWord(flags.journal)} --dry-run\` names them)`,
      );
    const undo = await rolloutToUndo(io.cwd, flags.journal, flags.dryRun !== true);
    try {
      const ended = undo.ended === "complete" ? "completed" : "halted";
      if (undo.waves.length === 0) {
        io.stdout.write(
          `Nothing to roll back: the rollout ${ended}, and every wave it wrote was rolled back.\n`,
        );
        return;
      }
      const names = (waves: readonly { name: string }[]) => waves.map((wave) => `"${wave.name}"`).join(", ");
      const undoneBefore = (count: number) =>
        `${plural(count, "wave")} of the rollout undone before it: ${names(undo.waves.slice(0, count))}`;
      let undone = 0;
      try {
        for (const [position, wave] of undo.waves.entries()) {
          io.stderr.write(
            `rollback: wave "${wave.name}" (${describeProjects(wave.projects)}), ${position + 1} of ${undo.waves.length} to undo, newest first: journal ${wave.journals.join(", then ")}\n`,
          );
          const before = undone === 0 ? undefined : undoneBefore(undone);
          for (const journal of wave.journals)
            await runRollback({ ...flags, journal }, interrupts, flags.journal, before);
          if (flags.dryRun !== true) await recordWaveUndone(undo, wave, io.cwd);
          undone += 1;
        }
      } catch (error) {
        // Stopped part way (refused, cancelled, incomplete, interrupted): the waves undone so far
        // stay undone, and are said, as are those left and how to go on.
        if (undone === 0 || flags.dryRun === true) throw error;
        io.stderr.write(
          `rollback: the rollout's undo stopped; ${undoneBefore(undone)}; left: ${names(undo.waves.slice(undone))}. Run pcsync rollback --journal ${shellWord(flags.journal)} again to go on.\n`,
        );
        throw error;
      }
      io.stdout.write(
        flags.dryRun === true
          ? `Dry run: rolling back the rollout (it ${ended}) undoes ${plural(undo.waves.length, "wave")}, newest first: ${names(undo.waves)}.\n`
          : `Rolled back the rollout (it ${ended}): ${plural(undo.waves.length, "wave")} undone, newest first: ${names(undo.waves)}.\n`,
      );
    } finally {
      await undo.release();
    }
  };
  return command.action((flags: RollbackFlags) =>
    withInterruptWatch(io.stderr, async (interrupts) =>
      (await isRolloutJournal(io.cwd, flags.journal))
        ? runRolloutRollback(flags, interrupts)
        : runRollback(flags, interrupts),
    ),
  );
};
