// `apply` of a plan with `rollout:`: the flags turned into the rollout use case's input
// (src/rollout/apply-rollout.ts), and its end told on stdout and as the exit code.

import type { ApiClient } from "../api/index.js";
import type { ApplyReport } from "../apply/types.js";
import type { DesiredState } from "../manifest/types.js";
import type { Plan } from "../plan/types.js";
import { nounAndList } from "../plural.js";
import { renderApplyReport } from "../render/apply-report.js";
import {
  type RolloutRun,
  applyRollout as runRolloutApply,
  throwUnlessComplete,
} from "../rollout/apply-rollout.js";
import type { ProjectHealth } from "../rollout/health-gate.js";
import {
  rolloutNotice,
  rolloutToFinish,
  unfinishedRolloutNotice,
  type WholeManifest,
} from "../rollout/last-rollout.js";
import { readGateCredentials } from "../rollout/rollout-gate.js";
import { rolloutDigest } from "../rollout/rollout-journal.js";
import type { RolloutOutcome, UndoneWave } from "../rollout/run-rollout.js";
import { resolveSilently } from "../run/plan-manifest.js";
import { createWebhookSender, type WebhookFlags } from "../run/webhooks.js";
import { type CliIo, useColour } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf } from "./connection.js";
import type { InterruptWatch } from "./interrupt.js";
import { applyJournaled, type JournalFlags, journalPathOf } from "./journal-run.js";
import { printApplyJson, writeNotices } from "./print-plan.js";
import { planSettingsOf, type ScopeFlags, scopeOf } from "./scope-options.js";
import type { OutputFormat } from "./shared-options.js";
import { appendStepSummary } from "./step-summary.js";

export interface RolloutRunFlags
  extends Pick<RolloutRun, "client" | "plan" | "current" | "rollout" | "desired" | "inputs"> {
  flags: ScopeFlags &
    ConnectionFlags &
    JournalFlags &
    WebhookFlags & { metricsFile?: string; format?: OutputFormat | undefined };
  io: CliIo;
  interrupts: InterruptWatch;
  onEnd?: ((rollout: RolloutJson) => void) | undefined;
  /** The manifest before --project, --family or --shard narrowed it: its rollout is locked too. */
  whole?: WholeManifest | undefined;
}

export interface RolloutJson {
  result: RolloutOutcome["result"];
  wave?: string;
  /** With `halted`: the failing projects with their figures, and the waves rolled back. */
  failing?: { project: string; status: string; figures: Record<string, number>; summary: string }[];
  undone?: UndoneWave[];
  /** With `interrupted`: where the signal came (InterruptedStage); in a rollback, the wave it stopped in and those left. */
  stage?: string;
  stoppedIn?: string;
  left?: string[];
  /** Projects this run's plan changes that the rollout it finished did not write (exit 1). */
  notWritten?: string[];
  journal: string;
}

function failingJson(failing: readonly ProjectHealth[]): NonNullable<RolloutJson["failing"]> {
  return failing.map(({ project, status, figures, summary }) => ({ project, status, figures, summary }));
}

function rolloutJson(outcome: RolloutOutcome, journal: string, notWritten: readonly string[]): RolloutJson {
  if (outcome.result === "complete")
    return { result: "complete", ...(notWritten.length > 0 ? { notWritten: [...notWritten] } : {}), journal };
  const { result, wave } = outcome;
  if (result === "halted")
    return { result, wave, failing: failingJson(outcome.failing), undone: outcome.undone, journal };
  if (result !== "interrupted") return { result, wave, journal };
  const { stage, halt } = outcome;
  if (halt === undefined) return { result, wave, stage, journal };
  const { failing, undone, stoppedIn, left } = halt;
  return { result, wave, stage, failing: failingJson(failing), undone, stoppedIn, left, journal };
}

/**
 * Before the plan is approved, refuses a rollout that could not judge (its health signal's
 * credentials unreadable), or whose last rollout halted with a failing project still holding the
 * change (exit 4). Whether --journal (or the default place) holds an unfinished rollout.
 */
export async function hasUnfinishedRollout(
  client: ApiClient,
  desired: DesiredState,
  plan: Plan,
  flags: ConnectionFlags & JournalFlags,
  io: CliIo,
  whole?: WholeManifest,
): Promise<boolean> {
  if (plan.rollout !== undefined)
    readGateCredentials(plan.rollout.health, { ...io, allowInsecureHttp: flags.insecureHttp === true });
  const unfinished = await rolloutToFinish(client, desired, plan, journalPathOf(flags), io.cwd, whole);
  // Said before the question, so that a yes is given to finishing that rollout, not a new one.
  if (unfinished !== undefined)
    writeNotices([await unfinishedRolloutNotice(client, desired, unfinished, plan, io.cwd)], io);
  return unfinished !== undefined;
}

/** Plan and --dry-run say it too. */
export async function noteLastRollout(
  client: ApiClient,
  desired: DesiredState,
  plan: Plan,
  flags: JournalFlags,
  io: CliIo,
  whole?: WholeManifest,
): Promise<void> {
  const notice = await rolloutNotice(client, desired, plan, io.cwd, journalPathOf(flags), whole);
  if (notice !== undefined) writeNotices([notice], io);
}

/** Returns the waves' merged report; one that did not complete throws: 4 halted, 1 stopped, 130/143. */
export async function applyRollout(run: RolloutRunFlags): Promise<ApplyReport> {
  const { flags, io, interrupts, whole, onEnd, ...given } = run;
  const webhooks = await createWebhookSender(flags, io, {
    format: "json",
    withoutUrl: "--webhook-secret-file signs the events of --webhook: give --webhook URL too",
  });
  // The re-read that says a wave is done plans with the run's own --target/--exclude: a record they
  // leave out was not to be written, so its difference does not make the wave "not as planned".
  const wholeDesired = whole === undefined ? undefined : await resolveSilently(run.client, whole.desired);
  const result = await runRolloutApply({
    wholeDigest:
      wholeDesired === undefined ? undefined : rolloutDigest(run.client.base.display, wholeDesired),
    ...given,
    journal: journalPathOf(flags),
    concurrency: concurrencyOf(flags),
    allowInsecureHttp: flags.insecureHttp === true,
    scope: scopeOf(flags),
    planSettings: () => planSettingsOf(flags, io),
    applyJournaled: (plan, current, { journal, ...options }) =>
      applyJournaled(run.client, plan, current, {
        ...options,
        flags: { ...flags, journal },
        io,
        interrupts,
        inputs: run.inputs,
      }),
    io,
    interrupts,
    webhooks,
    metricsFile: flags.metricsFile,
  }).catch(async (error: unknown) => {
    // A rollout that an error ended (the logs endpoint failing, a refusal) still says so in the
    // job's summary, as every outcome does; the error itself is told as any run's is.
    await appendStepSummary(run.plan, io, "pcsync apply (rollout stopped by an error)").catch(
      () => undefined,
    );
    throw error;
  });
  // With --format json, stdout holds the JSON document alone: the words go to stderr, and a rollout
  // that did not complete prints its document (with the failing projects) before its error.
  const json = flags.format === "json";
  const ends = result.outcome.result === "complete" && result.leftOut.length === 0;
  // One that does not complete ends with its error: its waves' writes are told first (a failed one
  // with why), as apply tells a complete one's once it returns.
  if (!json && !ends) renderApplyReport(result.report, io.stdout, { colour: useColour(io.stdout, io.env) });
  const told = outcomeText(result.outcome, result.journalPath);
  (json ? io.stderr : io.stdout).write(told);
  const summary = rolloutJson(result.outcome, result.journalPath, result.leftOut);
  if (json && !ends) printApplyJson(run.plan, result.report, io, summary);
  // The job page's summary says how the rollout ended, also (and above all) when it did not complete.
  await appendStepSummary(run.plan, io, `pcsync apply (rollout ${ROLLOUT_TITLES[result.outcome.result]})`, {
    report: result.report,
    after: told,
  });
  throwUnlessComplete(result, interrupts.received);
  onEnd?.(summary);
  return result.report;
}

const ROLLOUT_TITLES: Record<RolloutOutcome["result"], string> = {
  complete: "complete",
  halted: "halted",
  stopped: "stopped",
  not_as_planned: "stopped",
  changed: "stopped",
  interrupted: "interrupted",
};

function outcomeText(outcome: RolloutOutcome, journalPath: string): string {
  if (outcome.result === "complete") {
    const { unjudged } = outcome;
    const passed =
      unjudged.length === 0
        ? ""
        : `; ${unjudged.length <= 10 ? nounAndList(unjudged, "project") : `${unjudged.length} projects (${unjudged.slice(0, 10).join(", ")}, ...)`} had nothing to judge (the waves created or updated no plugin config there that logs: deletes, reorders, frontend apps or disabled configs), and passed unjudged`;
    return `Rollout complete: every wave was written, seen as planned, baked and judged healthy${passed}.\n`;
  }
  if (outcome.result === "interrupted" && outcome.halt !== undefined) {
    const { failing, undone, stoppedIn, left } = outcome.halt;
    const lines = haltLines(outcome.wave, failing, undone);
    lines.push(`  stopped by a signal while rolling back wave "${stoppedIn}" (INCOMPLETE)`);
    for (const name of left) lines.push(`  not rolled back: wave "${name}" (it still holds the change)`);
    lines.push(`Rollout journal: ${journalPath}`);
    return `${lines.join("\n")}\n`;
  }
  if (outcome.result !== "halted") return "";
  const lines = haltLines(outcome.wave, outcome.failing, outcome.undone);
  if (outcome.undone.length === 0)
    lines.push("Nothing was rolled back (on_failure: halt): the waves written stay.");
  lines.push(`Rollout journal: ${journalPath}`);
  return `${lines.join("\n")}\n`;
}

function haltLines(wave: string, failing: readonly ProjectHealth[], undone: readonly UndoneWave[]): string[] {
  return [
    `Rollout halted in wave "${wave}": failing projects:`,
    ...failing.map((verdict) => `  project ${verdict.project}: ${verdict.summary}`),
    ...undone.map(
      (entry) =>
        `  rolled back wave "${entry.wave}": ${entry.summary}${entry.complete ? "" : " (INCOMPLETE)"}`,
    ),
  ];
}
