// `apply` of a plan with `rollout:`: the parts the rollout runs on (re-plans of a wave's projects,
// journaled applies, rollbacks through the journal, the logs gate, sleeps a signal ends) put
// together, and the rollout's end told as a result and an exit code.

import { dirname, join } from "node:path";
import { realSleep } from "../api/abortable-sleep.js";
import type { ApiClient } from "../api/index.js";
import { RunError } from "../apply/run-error.js";
import type { ApplyReport } from "../apply/types.js";
import { describeError } from "../errors.js";
import { familyKey } from "../families.js";
import type { RunInput } from "../files/output-target.js";
import { writeFileSafely } from "../files/write-file.js";
import { InputError } from "../input-error.js";
import { defaultJournalPath } from "../journal/apply-journal.js";
import type { DesiredState } from "../manifest/types.js";
import type { CurrentState, Plan, PlanRollout } from "../plan/types.js";
import { isApplyComplete } from "../render/apply-report.js";
import { createLogHealthGate } from "../rollout/log-health.js";
import { rolloutWebhookEvent } from "../rollout/rollout-events.js";
import {
  findUnfinishedRollout,
  RolloutJournal,
  type RolloutState,
  readRolloutJournal,
  rolloutDigest,
} from "../rollout/rollout-journal.js";
import { createRolloutMetrics, type WaveStatus } from "../rollout/rollout-metrics.js";
import {
  type RolloutEvent,
  type RolloutOutcome,
  rolloutTargets,
  runRollout,
} from "../rollout/run-rollout.js";
import { planManifest } from "../run/plan-manifest.js";
import { rollBackJournal } from "../run/rollback-journal.js";
import { selectFamilies } from "../watch/heal.js";
import { renderOwnMetrics } from "../watch/watch-metrics.js";
import { WEBHOOK_DEFAULTS, WebhookSender } from "../watch/webhook-sender.js";
import type { CliIo } from "./cli-io.js";
import { type ConnectionFlags, concurrencyOf } from "./connection.js";
import type { InterruptWatch } from "./interrupt.js";
import { applyJournaled, type JournalFlags, shellWord } from "./journal-run.js";
import { planSettingsOf, type ScopeFlags, scopeOf } from "./scope-options.js";
import { parseWebhooks, readWebhookSecret } from "./webhook-options.js";

export interface RolloutRun {
  client: ApiClient;
  plan: Plan;
  /** The state the plan was made from (or re-read after the approval). */
  current: CurrentState;
  rollout: PlanRollout;
  /** The manifest as planned (`projects: all` resolved): each wave is planned again from it. */
  desired: DesiredState;
  flags: ScopeFlags & ConnectionFlags & JournalFlags;
  io: CliIo;
  interrupts: InterruptWatch;
  inputs: readonly RunInput[];
  onEvent?: (event: RolloutEvent) => void;
  /** Where the events go besides the output; drained (10 s at most) before the run ends. */
  webhooks?: WebhookSender;
  /** `--metrics-file`: the rollout's metrics are written there at each event (absolute or from cwd). */
  metricsFile?: string;
}

/** `apply --metrics-file PATH`, for a rollout's metrics; nothing without the flag. */
export function rolloutMetricsFile(flags: { metricsFile?: string }): { metricsFile?: string } {
  return flags.metricsFile === undefined ? {} : { metricsFile: flags.metricsFile };
}

/** The webhooks of `apply --webhook`, for a rollout's events; none without the flag. */
export async function rolloutWebhooks(
  flags: { webhook?: string[]; webhookSecretFile?: string },
  io: CliIo,
): Promise<{ webhooks?: WebhookSender }> {
  const urls = parseWebhooks(flags.webhook ?? [], io);
  if (urls.length === 0) {
    if (flags.webhookSecretFile !== undefined)
      throw new InputError(
        "usage",
        "--webhook-secret-file signs the events of --webhook: give --webhook URL too",
      );
    return {};
  }
  const secret =
    flags.webhookSecretFile === undefined
      ? undefined
      : await readWebhookSecret(flags.webhookSecretFile, io.cwd, io.secrets);
  return {
    webhooks: new WebhookSender({
      ...WEBHOOK_DEFAULTS,
      urls,
      format: "json",
      secret,
      secrets: io.secrets,
      warn: (line) => io.stderr.write(`warning: ${line}\n`),
      proxyEnvironment: io.env,
    }),
  };
}

/** The report of every wave applied, as one. */
export function mergeReports(reports: readonly ApplyReport[]): ApplyReport {
  return {
    outcomes: reports.flatMap((report) => report.outcomes),
    done: reports.reduce((sum, report) => sum + report.done, 0),
    failed: reports.reduce((sum, report) => sum + report.failed, 0),
    skipped: reports.reduce((sum, report) => sum + report.skipped, 0),
    unknown: reports.reduce((sum, report) => sum + report.unknown, 0),
    unchecked: reports.reduce((sum, report) => sum + report.unchecked, 0),
    interrupted: reports.some((report) => report.interrupted),
  };
}

/**
 * The rollout of this manifest that a run before this one started and did not end (killed, or
 * stopped in a wave): an apply of the same manifest finishes it, even when no change is left.
 */
export async function unfinishedRollout(
  client: ApiClient,
  desired: DesiredState,
  flags: JournalFlags,
  io: CliIo,
): Promise<RolloutState | undefined> {
  const server = client.base.display;
  const digest = rolloutDigest(server, desired);
  const given = typeof flags.journal === "string" ? flags.journal : undefined;
  const found =
    given === undefined
      ? await findUnfinishedRollout(io.cwd, server, digest)
      : await readRolloutJournal(io.cwd, given).catch(() => undefined);
  return found !== undefined &&
    found.ended === undefined &&
    found.header.digest === digest &&
    found.header.server === server
    ? found
    : undefined;
}

/**
 * Runs (or finishes) the rollout of `run.plan`; returns the waves' merged report. Ends with an
 * error whose exit code says how it ended when it did not complete: 4 halted, 1 stopped, 130/143.
 */
export async function applyRollout(run: RolloutRun): Promise<ApplyReport> {
  const { client, io, flags, interrupts } = run;
  const server = client.base.display;
  const digest = rolloutDigest(server, run.desired);
  const given = typeof flags.journal === "string" ? flags.journal : undefined;
  const resumed = await unfinishedRollout(client, run.desired, flags, io);
  const rollout = resumed?.header.rollout ?? run.rollout;
  const journal = resumed
    ? RolloutJournal.resume(resumed)
    : await RolloutJournal.start(io.cwd, given, {
        kind: "rollout",
        version: 1,
        server,
        digest,
        startedAt: new Date().toISOString(),
        rollout,
        targets: rolloutTargets(run.plan),
      });
  if (resumed) {
    io.stderr.write(
      `Resuming the rollout of ${resumed.path}${resumed.halted ? `: it halted in wave "${rollout.waves[resumed.halted.wave]?.name}", and its rollback is finished first` : ": the waves already judged healthy are not written again"}.\n`,
    );
  } else io.stderr.write(`Rollout journal: ${journal.path}\n`);

  const journalDir = given === undefined ? undefined : dirname(given);
  const waveDesired = (projects: readonly string[], families?: ReadonlySet<string>): DesiredState => {
    const keep = new Set(projects);
    const { rollout: _rollout, ...rest } = run.desired;
    return {
      ...rest,
      families: run.desired.families.filter(
        (family) =>
          keep.has(family.project) &&
          (families === undefined || families.has(familyKey(family.project, family.family))),
      ),
    };
  };
  const reports: ApplyReport[] = [];
  const metrics = await startMetricsFile(run, journal.state);
  interrupts.beginWrites();
  const outcome = await runRollout(rollout, {
    journal,
    cwd: io.cwd,
    // Each wave writes its part of the plan this run made (and the user approved), from the state
    // read once at the start: a wave's projects are written by no earlier wave, and the re-read
    // after its writes is what says the wave is done.
    planWave(projects) {
      const keep = new Set(projects);
      return {
        plan: selectFamilies(run.plan, (project) => keep.has(project)),
        current: { families: run.current.families.filter((family) => keep.has(family.project)) },
      };
    },
    async planProjects(projects, families) {
      // The lists the planner needs for these families (the overlap of lists included) are its to
      // choose: only the manifest's blocks are narrowed.
      const waveFlags = { ...flags, target: [], exclude: [] };
      const planned = await planManifest(
        client,
        waveDesired(projects, families),
        scopeOf(waveFlags),
        planSettingsOf(waveFlags, io),
        io,
      );
      return { plan: planned.plan, current: planned.current };
    },
    async applyWave(plan: Plan, current: CurrentState, journalPath: string) {
      const report = await applyJournaled(client, plan, current, {
        flags: { ...flags, journal: journalPath },
        io,
        interrupts,
        start: { command: "apply", planFile: null },
        inputs: run.inputs,
      });
      reports.push(report);
      return report;
    },
    newJournalPath(label) {
      const base = defaultJournalPath(new Date());
      const path = base.replace(/\.jsonl$/, `-${label}.jsonl`);
      return journalDir === undefined ? path : join(journalDir, path.split(/[/\\]/).pop() ?? path);
    },
    async rollbackJournal(path) {
      // Checked like any `pcsync rollback`, through the same use case: one writer per journal, no
      // change since the run, and no name another live record holds now.
      const outcome = await rollBackJournal(
        { journal: path, cwd: io.cwd, force: false, concurrency: concurrencyOf(flags) },
        {
          connect: async () => client,
          onNote: () => undefined,
          apply: (wave) =>
            applyJournaled(client, wave.plan, wave.current, {
              flags: { ...flags, journal: undefined },
              io,
              interrupts,
              start: wave.start,
              alsoKnown: wave.alsoKnown,
              inputs: run.inputs,
            }),
        },
      );
      if (outcome.result === "refused") {
        const why =
          outcome.conflicts.length > 0
            ? `${outcome.conflicts.length} record(s) were changed since by someone else`
            : `it would give ${outcome.clashes.length} name(s) to two live records`;
        return {
          complete: false,
          summary: `not rolled back: ${why}; see \`pcsync rollback --journal ${shellWord(path)} --dry-run\``,
        };
      }
      if (outcome.result !== "applied") return { complete: true, summary: "nothing left to undo" };
      const { report } = outcome;
      const complete = isApplyComplete(report) && !report.interrupted;
      return {
        complete,
        summary: `${report.done} change(s) undone${complete ? "" : `, ${report.failed + report.unknown + report.skipped} not`}`,
      };
    },
    gate: createLogHealthGate(client, rollout.health.logs, concurrencyOf(flags)),
    signal: interrupts.signal,
    sleep: realSleep,
    now: () => new Date(),
    say: (line) => io.stderr.write(`rollout: ${line}\n`),
    onEvent: (event) => {
      run.onEvent?.(event);
      run.webhooks?.send(rolloutWebhookEvent(event, new Date()));
      metrics?.record(event);
    },
  }).finally(async () => {
    await metrics?.flushed();
    if (run.webhooks !== undefined && !(await run.webhooks.close(10_000)))
      io.stderr.write("warning: some rollout events were not delivered within 10 s of the end\n");
  });
  const merged = mergeReports(reports);
  tellOutcome(outcome, journal.path, io);
  throwUnlessComplete(outcome, merged, journal.path, interrupts);
  return merged;
}

/** Where each wave of a rollout stands by its journal: a resumed rollout's metrics start there. */
function waveStatuses(state: RolloutState): WaveStatus[] {
  return state.waves.map((wave): WaveStatus => {
    if (wave.rolledBack === true) return "rolled_back";
    if (wave.judged !== undefined) return wave.judged.healthy ? "passed" : "halted";
    return wave.journals.length > 0 ? "started" : "pending";
  });
}

/**
 * The rollout's metrics file, written now (every wave's status, from the journal) and again at each
 * event, one write after another; a write that fails is a warning: the rollout goes on.
 */
async function startMetricsFile(
  run: RolloutRun,
  state: RolloutState,
): Promise<{ record(event: RolloutEvent): void; flushed(): Promise<void> } | undefined> {
  const { metricsFile, io } = run;
  if (metricsFile === undefined) return undefined;
  const metrics = createRolloutMetrics(
    state.header.rollout.waves.map((wave) => wave.name),
    io.secrets,
    waveStatuses(state),
  );
  let failed = false;
  const write = async () => {
    try {
      // Atomic (a textfile collector never reads half of it), 0600, never over the manifest.
      await writeFileSafely(metricsFile, await renderOwnMetrics(metrics), {
        cwd: io.cwd,
        inputs: run.inputs,
      });
    } catch (error) {
      if (!failed) io.stderr.write(`warning: --metrics-file: ${describeError(error)}\n`);
      failed = true;
    }
  };
  let writes = write();
  await writes;
  return {
    record(event) {
      metrics.record(event, new Date());
      writes = writes.then(write);
    },
    flushed: () => writes,
  };
}

function tellOutcome(outcome: RolloutOutcome, journalPath: string, io: CliIo): void {
  if (outcome.result === "complete") {
    io.stdout.write("Rollout complete: every wave was written, seen as planned, baked and judged healthy.\n");
    return;
  }
  if (outcome.result !== "halted") return;
  const lines = [`Rollout halted in wave "${outcome.wave}": failing projects:`];
  for (const verdict of outcome.failing) lines.push(`  project ${verdict.project}: ${verdict.summary}`);
  if (outcome.undone.length === 0)
    lines.push("Nothing was rolled back (on_failure: halt): the waves written stay.");
  for (const entry of outcome.undone)
    lines.push(
      `  rolled back wave "${entry.wave}": ${entry.summary}${entry.complete ? "" : " (INCOMPLETE)"}`,
    );
  lines.push(`Rollout journal: ${journalPath}`);
  io.stdout.write(`${lines.join("\n")}\n`);
}

function throwUnlessComplete(
  outcome: RolloutOutcome,
  report: ApplyReport,
  journalPath: string,
  interrupts: InterruptWatch,
): void {
  const again = `apply the same manifest again to finish it (rollout journal ${journalPath})`;
  switch (outcome.result) {
    case "complete":
      return;
    case "halted":
      throw new RunError("rollout_halted", {
        wave: outcome.wave,
        failing: outcome.failing.map((verdict) => verdict.project),
        rolledBack: outcome.rolledBack,
        undoneWaves: outcome.undone.length,
        undoneComplete: outcome.undone.every((entry) => entry.complete),
        again,
      });
    case "interrupted":
      throw new RunError("interrupted", {
        signal: interrupts.received ?? "SIGINT",
        rollout: { wave: outcome.wave, stage: outcome.stage, again },
      });
    case "stopped": {
      const signal = interrupts.received;
      const done = `${report.done} change(s) made, ${report.failed} failed, ${report.unknown} unknown, ${report.skipped} not started`;
      const rollout = { wave: outcome.wave, done, again };
      throw signal === undefined
        ? new RunError("apply_incomplete", { rollout })
        : new RunError("interrupted", { signal, rollout });
    }
    case "not_as_planned":
      throw new RunError("rollout_not_as_planned", { wave: outcome.wave, projects: outcome.projects, again });
  }
}
