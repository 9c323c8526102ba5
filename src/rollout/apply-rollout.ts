// The rollout use case: `apply` of a plan with `rollout:`, from the rollout journal started (or
// resumed) to the outcome. It puts together the parts the rollout runs on: re-plans of a wave's
// projects, journaled applies, rollbacks through the journal, the health gate, the metrics file,
// the webhooks and sleeps a signal ends. The CLI gives it the flags' values and renders the end.

import { mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { realSleep } from "../abortable-sleep.js";
import type { ApiClient } from "../api/index.js";
import { findPlanProblems, readStateForPlan } from "../apply/check-saved-plan.js";
import { RunError } from "../apply/run-error.js";
import type { ApplyReport } from "../apply/types.js";
import type { InterruptSignal } from "../errors.js";
import { familyKey } from "../families.js";
import type { RunInput } from "../files/output-target.js";
import { isInputError } from "../input-error.js";
import { defaultJournalPath, type JournalStart, makeDefaultDirectory } from "../journal/apply-journal.js";
import { JournalLock } from "../journal/journal-lock.js";
import { configFingerprint } from "../manifest/index.js";
import type { DesiredState } from "../manifest/types.js";
import { metricsFileWriter } from "../notify/metrics-file.js";
import type { WebhookSender } from "../notify/webhook-sender.js";
import { projectsWritten } from "../plan/rollout-waves.js";
import { selectFamilies } from "../plan/select-families.js";
import type { CurrentState, Plan, PlanRollout } from "../plan/types.js";
import { plural } from "../plural.js";
import { isApplyComplete } from "../render/apply-report.js";
import { type PlanScope, type PlanSettings, planManifest } from "../run/plan-manifest.js";
import { rollBackJournal } from "../run/rollback-journal.js";
import type { RunIo } from "../run/run-io.js";
import { shellWord } from "../shell-word.js";
import type { HealthGate } from "./health-gate.js";
import { keptSettings, unfinishedRollout } from "./last-rollout.js";
import { rolloutWebhookEvent } from "./rollout-events.js";
import { createRolloutGate } from "./rollout-gate.js";
import {
  ROLLOUT_JOURNAL_DIR,
  ROLLOUT_RUN_LOCK_HELD,
  RolloutJournal,
  type RolloutState,
  rolloutDigest,
  rolloutRunLock,
} from "./rollout-journal.js";
import { createRolloutMetrics, type WaveStatus } from "./rollout-metrics.js";
import { type RolloutEvent, type RolloutOutcome, rolloutTargets, runRollout } from "./run-rollout.js";

/** What the rollout needs of the run's interrupt handling. */
export interface RolloutInterrupts {
  /** Aborts on the first signal after `beginWrites()`. */
  readonly signal: AbortSignal;
  readonly received: InterruptSignal | undefined;
  beginWrites(): void;
}

/** One journaled apply, as the caller runs them (progress, the journal's closing lines). */
export type ApplyJournaled = (
  plan: Plan,
  current: CurrentState,
  options: {
    /** The apply journal's path; undefined: the default place. */
    journal: string | undefined;
    start: Omit<JournalStart, "server" | "plan">;
    alsoKnown?: CurrentState | undefined;
    /** The lock the rollout holds on the journal's path (a wave's). */
    lock?: JournalLock | undefined;
  },
) => Promise<ApplyReport>;

export interface RolloutRun {
  /**
   * For a run that --project, --family or --shard narrow: the whole manifest's rollout digest, whose
   * run lock it holds too, so that the whole manifest's rollout does not start beside it.
   */
  wholeDigest?: string | undefined;
  client: ApiClient;
  plan: Plan;
  /** The state the plan was made from (or re-read after the approval). */
  current: CurrentState;
  rollout: PlanRollout;
  /** The manifest as planned (`projects: all` resolved): each wave is planned again from it. */
  desired: DesiredState;
  /** `--journal PATH`: the rollout journal, its waves' journals beside it; undefined: the default place. */
  journal: string | undefined;
  concurrency: number;
  /** `--insecure-http`: a health signal's credentials may go over plain http to another host. */
  allowInsecureHttp: boolean;
  /** The run's scope: a wave's projects are planned again within it. */
  scope: PlanScope;
  /** The planner's settings for a wave's re-plan (no --target/--exclude: the manifest is narrowed). */
  planSettings(): PlanSettings;
  applyJournaled: ApplyJournaled;
  io: RunIo;
  interrupts: RolloutInterrupts;
  inputs: readonly RunInput[];
  onEvent?: (event: RolloutEvent) => void;
  /** Where the events go besides the output; drained (10 s at most) before the run ends. */
  webhooks?: WebhookSender | undefined;
  /** `--metrics-file`: the rollout's metrics are written there at each event (absolute or from cwd). */
  metricsFile?: string | undefined;
}

/** How a rollout ended, with the waves' merged report; `throwUnlessComplete` turns it into an exit. */
export interface RolloutResult {
  outcome: RolloutOutcome;
  report: ApplyReport;
  journalPath: string;
  /** Projects this run's plan changes that the rollout (resumed) did not write: `projectsLeftOut`. */
  leftOut: readonly string[];
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
    ...latest(reports.flatMap((report) => (report.mayLandUntil === undefined ? [] : [report.mayLandUntil]))),
  };
}

function latest(times: readonly Date[]): Pick<ApplyReport, "mayLandUntil"> {
  const ms = times.reduce((max, time) => Math.max(max, time.getTime()), Number.NEGATIVE_INFINITY);
  return Number.isFinite(ms) ? { mayLandUntil: new Date(ms) } : {};
}

/**
 * Runs (or finishes) the rollout of `run.plan`; how it ended is the caller's to tell. One run at a
 * time drives a manifest's rollout from a working directory: a second apply of the same manifest
 * while the first runs (or bakes) is refused (exit 3, naming the run), where it would otherwise
 * resume the journal the first still writes, or start a second rollout beside it.
 */
export async function applyRollout(run: RolloutRun): Promise<RolloutResult> {
  const digest = rolloutDigest(run.client.base.display, run.desired);
  await mkdir(resolve(run.io.cwd, ROLLOUT_JOURNAL_DIR), { recursive: true });
  const lock = await JournalLock.acquire(rolloutRunLock(digest), {
    cwd: run.io.cwd,
    command: "apply (rollout)",
    held: ROLLOUT_RUN_LOCK_HELD,
  });
  if (lock.takeOverNote !== undefined) run.io.stderr.write(`${lock.takeOverNote}\n`);
  let whole: JournalLock | undefined;
  try {
    if (run.wholeDigest !== undefined && run.wholeDigest !== digest)
      whole = await JournalLock.acquire(rolloutRunLock(run.wholeDigest), {
        cwd: run.io.cwd,
        command: "apply (rollout, narrowed)",
        held: ROLLOUT_RUN_LOCK_HELD,
      });
    return await applyRolloutLocked(run, digest);
  } finally {
    await whole?.release();
    await lock.release();
  }
}

async function applyRolloutLocked(run: RolloutRun, digest: string): Promise<RolloutResult> {
  const { client, io } = run;
  const server = client.base.display;
  const given = run.journal;
  const resumed = await unfinishedRollout(client, run.desired, given, io.cwd);
  const rollout = resumed?.header.rollout ?? run.rollout;
  // Before the journal: a credential the gate cannot read refuses the run with nothing started.
  const gate = createRolloutGate(client, rollout.health, {
    concurrency: run.concurrency,
    env: io.env,
    secrets: io.secrets,
    allowInsecureHttp: run.allowInsecureHttp,
  });
  const journal = resumed
    ? RolloutJournal.resume(resumed)
    : await RolloutJournal.start(
        io.cwd,
        given,
        {
          kind: "rollout",
          version: 1,
          server,
          digest,
          startedAt: new Date().toISOString(),
          rollout,
          // What the manifest asks of each config a wave judges: a halt holds where it is asked again.
          targets: rolloutTargets(run.plan).map((target) => {
            const asks = configFingerprint(run.desired, target);
            return asks === undefined ? target : { ...target, asks };
          }),
        },
        run.inputs,
      );
  if (resumed) {
    io.stderr.write(
      `Resuming the rollout of ${resumed.path}${resumed.halted ? `: it halted in wave "${rollout.waves[resumed.halted.wave]?.name}", and its rollback is finished first` : ": the waves already judged healthy are not written again"}${keptSettings(resumed.header.rollout, run.desired.rollout)}.\n`,
    );
  } else {
    if (journal.movedAside !== undefined)
      io.stderr.write(
        `The rollout journal ${journal.path} held a rollout that ended (${journal.movedAside.ended}): moved to ${journal.movedAside.to}.\n`,
      );
    io.stderr.write(`Rollout journal: ${journal.path}\n`);
  }

  const locks = new WaveLocks(io.cwd);
  try {
    for (const wave of journal.state.waves)
      if (wave.rolledBack !== true) for (const path of wave.journals) await locks.hold(path);
    return await runLocked(run, journal, rollout, gate, locks);
  } finally {
    await locks.releaseAll();
  }
}

/**
 * The locks of a rollout's wave journals, each held from its wave's writes (or the resume) until
 * the run ends: a `pcsync rollback` of a wave by hand while the rollout runs or bakes is refused
 * (exit 3, naming this run), where the rollout would otherwise judge, and go on from, a wave that
 * no longer holds its change. The halt's own rollback of a wave lets go of its lock first.
 */
class WaveLocks {
  readonly #held = new Map<string, JournalLock>();

  constructor(private readonly cwd: string) {}

  async hold(path: string): Promise<JournalLock> {
    await makeDefaultDirectory(path, this.cwd);
    const lock = await JournalLock.acquire(path, { cwd: this.cwd, command: "apply (rollout)" });
    this.#held.set(path, lock);
    return lock;
  }

  async letGo(path: string): Promise<void> {
    await this.#held.get(path)?.release();
    this.#held.delete(path);
  }

  async releaseAll(): Promise<void> {
    for (const path of [...this.#held.keys()]) await this.letGo(path);
  }
}

async function runLocked(
  run: RolloutRun,
  journal: RolloutJournal,
  rollout: PlanRollout,
  gate: HealthGate,
  locks: WaveLocks,
): Promise<RolloutResult> {
  const { client, io, interrupts } = run;
  const reports: ApplyReport[] = [];
  const journalDir = run.journal === undefined ? undefined : dirname(run.journal);
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
  const leftOut = projectsLeftOut(run.plan, rollout, journal.state);
  if (leftOut.length > 0)
    io.stderr.write(
      `warning: the rollout this run finishes was planned by an earlier run, and none of its waves still to finish takes ${describeLeftOut(leftOut)}: ${leftOut.length === 1 ? "its" : "their"} changes in this plan are left for a new rollout, after this one ends\n`,
    );
  const metrics = await startMetricsFile(run, journal.state);
  interrupts.beginWrites();
  const outcome = await runRollout(rollout, {
    journal,
    cwd: io.cwd,
    // Each wave writes its part of the plan this run made (and the user approved): a wave's
    // projects are written by no earlier wave, and the re-read after its writes is what says the
    // wave is done. Once a bake has passed, the lists it writes are read again first and the plan
    // checked against them as a saved plan is, and it is written to what was read.
    async planWave(projects, check) {
      const keep = new Set(projects);
      const plan = selectFamilies(run.plan, (project) => keep.has(project));
      const started = { families: run.current.families.filter((family) => keep.has(family.project)) };
      if (!check || projectsWritten(plan).size === 0) return { plan, current: started };
      const read = await readStateForPlan(plan, client, { concurrency: run.concurrency, noGuards: true });
      const changed = findPlanProblems(plan, read);
      if (changed.length > 0) return { changed };
      const fresh = new Set(read.families.map((family) => familyKey(family.project, family.family)));
      return {
        plan,
        current: {
          families: [
            ...started.families.filter((family) => !fresh.has(familyKey(family.project, family.family))),
            ...read.families,
          ],
        },
      };
    },
    async planProjects(projects, families) {
      // The lists the planner needs for these families (the overlap of lists included) are its to
      // choose: only the manifest's blocks are narrowed.
      const plan = (some: readonly string[], known: CurrentState | undefined) =>
        planManifest(
          client,
          waveDesired(some, families),
          run.scope,
          { ...run.planSettings(), known, partOfAnotherPlan: true },
          io,
        );
      if (families === undefined) return plan(projects, undefined);
      // The lists of the families the wave did not change only tell which records of a list are
      // another family's (the overlap): those read at the start serve. A project they leave with
      // work (a record of that family created since looks like one to prune) is read whole again,
      // so that no change in them is missed or made up.
      const keep = new Set(projects);
      const known = {
        families: run.current.families.filter(
          (family) => keep.has(family.project) && !families.has(familyKey(family.project, family.family)),
        ),
      };
      // A record made since in a family the wave did not change may make the lists read at the
      // start tell the overlap wrongly: a frontend app made since, which posthog-2024's
      // plugin_configs also lists, looks like a second plugin config of its name, and the plan
      // cannot be made. Then every list of the wave's projects is read again.
      let first: Awaited<ReturnType<typeof plan>>;
      try {
        first = await plan(projects, known);
      } catch (error) {
        if (!isInputError(error, "plan_invalid")) throw error;
        return plan(projects, undefined);
      }
      const unsettled = projectsWritten(first.plan);
      if (unsettled.size === 0) return first;
      const again = await plan([...unsettled], undefined);
      return {
        plan: again.plan,
        current: {
          families: [
            ...first.current.families.filter((family) => !unsettled.has(family.project)),
            ...again.current.families,
          ],
        },
      };
    },
    async applyWave(plan: Plan, current: CurrentState, journalPath: string) {
      const report = await run.applyJournaled(plan, current, {
        journal: journalPath,
        start: { command: "apply", planFile: null },
        lock: await locks.hold(journalPath),
      });
      reports.push(report);
      return report;
    },
    newJournalPath(label) {
      const path = defaultJournalPath(new Date(), label);
      return journalDir === undefined ? path : join(journalDir, path.split(/[/\\]/).pop() ?? path);
    },
    async rollbackJournal(path) {
      await locks.letGo(path);
      // Checked like any `pcsync rollback`, through the same use case: one writer per journal, no
      // change since the run, and no name another live record holds now.
      const outcome = await rollBackJournal(
        { journal: path, cwd: io.cwd, force: false, concurrency: run.concurrency },
        {
          connect: async () => client,
          onNote: () => undefined,
          apply: (wave) =>
            run.applyJournaled(wave.plan, wave.current, {
              journal: undefined,
              start: wave.start,
              alsoKnown: wave.alsoKnown,
            }),
        },
      );
      if (outcome.result === "refused") {
        const why =
          outcome.conflicts.length > 0
            ? `${plural(new Set(outcome.conflicts.map((conflict) => `${conflict.project}/${conflict.family}/${conflict.id}`)).size, "record was", "records were")} changed since by someone else`
            : `it would give ${plural(outcome.clashes.length, "name")} to two live records`;
        // Running the rollout again meets the same change: only the user can say which one stays.
        return {
          complete: false,
          summary: `not rolled back: ${why}; see \`pcsync rollback --journal ${shellWord(path)} --dry-run\``,
          ...(outcome.conflicts.length > 0
            ? { byHand: `pcsync rollback --journal ${shellWord(path)} --force` }
            : {}),
        };
      }
      if (outcome.result !== "applied") return { complete: true, summary: "nothing left to undo" };
      const { report } = outcome;
      const complete = isApplyComplete(report) && !report.interrupted;
      return {
        complete,
        summary: `${plural(report.done, "change")} undone${complete ? "" : `, ${report.failed + report.unknown + report.skipped} not`}`,
      };
    },
    gate,
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
  return { outcome, report: mergeReports(reports), journalPath: journal.path, leftOut };
}

/**
 * The projects this run's plan changes that the rollout it runs will not write: a rollout resumed
 * from its journal writes its own waves, and a project that none of its waves still to finish takes
 * (its wave was judged healthy before this run, or the rollout was started with other --project,
 * --target or --exclude flags, or the project changed since) is not its to write.
 */
function projectsLeftOut(plan: Plan, rollout: PlanRollout, state: RolloutState): string[] {
  if (state.halted !== undefined) return [];
  const open = new Set(
    rollout.waves.flatMap((wave, index) => (state.waves[index]?.judged?.healthy ? [] : wave.projects)),
  );
  return [...projectsWritten(plan)].filter((project) => !open.has(project));
}

function describeLeftOut(projects: readonly string[]): string {
  const shown = projects.slice(0, 10).join(", ");
  return `project${projects.length === 1 ? "" : "s"} ${shown}${projects.length > 10 ? ` and ${projects.length - 10} more` : ""}`;
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
): Promise<{ record(event: RolloutEvent): void; flushed(): Promise<unknown> } | undefined> {
  const { metricsFile, io } = run;
  if (metricsFile === undefined) return undefined;
  const metrics = createRolloutMetrics(
    state.header.rollout.waves.map((wave) => wave.name),
    io.secrets,
    waveStatuses(state),
  );
  const write = metricsFileWriter(metricsFile, metrics, io, run.inputs, { warnOnce: true });
  let writes: Promise<unknown> = write();
  await writes;
  return {
    record(event) {
      metrics.record(event, new Date());
      writes = writes.then(write);
    },
    flushed: () => writes,
  };
}

/** The error whose exit code says how a rollout that did not complete ended: 4 halted, 1 stopped, 130/143. */
export function throwUnlessComplete(result: RolloutResult, received: InterruptSignal | undefined): void {
  const { outcome, report, journalPath } = result;
  const again = `apply the same manifest again to finish it (rollout journal ${journalPath})`;
  switch (outcome.result) {
    case "complete":
      if (result.leftOut.length > 0)
        throw new RunError("rollout_left_out", {
          journal: journalPath,
          projects: describeLeftOut(result.leftOut),
        });
      return;
    case "halted":
      throw new RunError("rollout_halted", {
        wave: outcome.wave,
        failing: outcome.failing.map((verdict) => verdict.project),
        rolledBack: outcome.rolledBack,
        undoneWaves: outcome.undone.length,
        undoneComplete: outcome.undone.every((entry) => entry.complete),
        byHand: outcome.undone.flatMap((entry) => (entry.byHand === undefined ? [] : [entry.byHand])),
        again,
      });
    case "interrupted":
      throw new RunError("interrupted", {
        signal: received ?? "SIGINT",
        rollout: {
          wave: outcome.wave,
          stage: outcome.stage,
          again,
          ...(outcome.halt === undefined
            ? {}
            : {
                undoneWaves: outcome.halt.undone.map((entry) => entry.wave),
                stoppedIn: outcome.halt.stoppedIn,
                left: outcome.halt.left,
              }),
        },
      });
    case "stopped": {
      const done = `${plural(report.done, "change")} made, ${report.failed} failed, ${report.unknown} unknown, ${report.skipped} not started`;
      const rollout = { wave: outcome.wave, done, again };
      throw received === undefined
        ? new RunError("apply_incomplete", { rollout })
        : new RunError("interrupted", { signal: received, rollout });
    }
    case "not_as_planned":
      throw new RunError("rollout_not_as_planned", {
        wave: outcome.wave,
        projects: outcome.projects,
        when: outcome.when,
        again,
      });
    case "changed":
      throw new RunError("rollout_changed", { wave: outcome.wave, reasons: outcome.reasons, again });
  }
}
