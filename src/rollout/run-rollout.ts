// A progressive rollout: the plan's projects written wave by wave, each wave re-read until it is
// seen as planned and baked (the bake counts from the writes, the re-read within it), then judged
// by the health gate; the next wave starts only after a healthy one. A failed wave halts the rollout and, with `on_failure: rollback`, every wave applied so far
// is rolled back through its journal, newest first. Every step is in the rollout journal before it
// is taken, so a run killed anywhere and applied again finishes what was started.

import { isRecordOfCreate } from "../apply/dedupe-creates.js";
import { type InterruptedStage, STAGE_WORDS } from "../apply/run-error.js";
import type { ApplyReport } from "../apply/types.js";
import { formatDuration } from "../duration.js";
import { type FamilyName, familyKey, getFamily, ofFamily } from "../families.js";
import { familiesShownBy, idsOfOtherFamiliesIn } from "../family-lists.js";
import { groupBy } from "../group-by.js";
import { hasChanges } from "../plan/plan-file.js";
import { projectsWritten } from "../plan/rollout-waves.js";
import type { CurrentState, Plan, PlanRollout } from "../plan/types.js";
import { plural } from "../plural.js";
import { sameName } from "../record-name.js";
import type { HealthGate, JudgedConfig, ProjectHealth } from "./health-gate.js";
import { type RolloutJournal, type RolloutTarget, wavesToUndo } from "./rollout-journal.js";

/** What a rollout tells the outside world as it goes: progress lines, webhooks, metrics. */
export type RolloutEvent =
  | { event: "rollout_wave_started"; wave: string; index: number; projects: string[] }
  | { event: "rollout_wave_passed"; wave: string; index: number; verdicts: ProjectHealth[] }
  | { event: "rollout_halted"; wave: string; index: number; failing: ProjectHealth[] }
  | { event: "rollout_rolled_back"; wave: string; index: number; complete: boolean }
  | { event: "rollout_completed"; waves: number }
  /** The rollout stopped without a verdict (applying the same manifest again finishes it). */
  | { event: "rollout_stopped"; wave: string; index: number; reason: StopReason; detail: string };

/** Why a rollout stopped short of a verdict: the outcome it ended with. */
export type StopReason = "stopped" | "not_as_planned" | "changed" | "interrupted" | "error";

export interface RolloutParts {
  journal: RolloutJournal;
  cwd: string;
  /**
   * The wave's part of the run's own plan, and the state to write it to. With `check` (a bake has
   * passed since the run read the state), the lists it writes are read again first and the plan
   * checked against them as a saved plan is: `changed` says why it no longer holds (a record it
   * updates was changed, a record of the name it creates appeared...); without, nothing is read.
   */
  planWave(
    projects: readonly string[],
    check: boolean,
  ): Promise<{ plan: Plan; current: CurrentState; changed?: undefined } | { changed: string[] }>;
  /**
   * Reads the projects again and plans them from the manifest (no cached status): only the
   * families in `families` (family keys) when given, every family of theirs otherwise.
   */
  planProjects(
    projects: readonly string[],
    families?: ReadonlySet<string>,
  ): Promise<{ plan: Plan; current: CurrentState }>;
  /** Applies one wave's plan, journaled in a new apply journal; its path is announced first. */
  applyWave(plan: Plan, current: CurrentState, journalPath: string): Promise<ApplyReport>;
  /** The path of a new apply journal for a wave (or its rollback). */
  newJournalPath(label: string): string;
  /** Rolls back one apply journal as `pcsync rollback` would, checks included. */
  rollbackJournal(path: string): Promise<{ complete: boolean; summary: string; byHand?: string }>;
  gate: HealthGate;
  signal: AbortSignal;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  now(): Date;
  say(line: string): void;
  onEvent(event: RolloutEvent): void;
}

/**
 * A wave a halted rollout rolled back: `complete`, or not, with why in `summary`; `byHand`, the
 * command that finishes it when running the rollout again cannot (a record changed since).
 */
export interface UndoneWave {
  wave: string;
  complete: boolean;
  summary: string;
  byHand?: string;
}

export type RolloutOutcome =
  /** `unjudged`: the projects its waves passed with nothing to judge (no config that logs was written). */
  | { result: "complete"; reports: ApplyReport[]; unjudged: string[] }
  | {
      result: "halted";
      wave: string;
      failing: ProjectHealth[];
      undone: UndoneWave[];
      rolledBack: boolean;
      reports: ApplyReport[];
    }
  | { result: "stopped"; wave: string; report: ApplyReport; reports: ApplyReport[] }
  /** Re-read after its writes (`written`), or when its bake ended (`baked`), projects not as planned. */
  | {
      result: "not_as_planned";
      wave: string;
      projects: string[];
      when: "written" | "baked";
      reports: ApplyReport[];
    }
  /** Before a wave's writes, its projects were found changed since the plan was made. */
  | { result: "changed"; wave: string; reasons: string[]; reports: ApplyReport[] }
  /**
   * By a signal: before a wave's writes (`check`), after them (`reread`), while it baked or was
   * judged, or in a halted rollout's rollback (with `halt`: what it had undone, and what not).
   */
  | {
      result: "interrupted";
      wave: string;
      stage: InterruptedStage;
      reports: ApplyReport[];
      halt?: StoppedRollback;
    };

/** A halted rollout's rollback that a signal stopped: the failing projects, and how far it went. */
export interface StoppedRollback {
  failing: ProjectHealth[];
  /** The waves rolled back before the signal, newest first. */
  undone: UndoneWave[];
  /** The wave whose rollback the signal stopped part-way (what it wrote is in its journal). */
  stoppedIn: string;
  /** The waves written before it, not rolled back: they still hold the change. */
  left: string[];
}

/** Passing projects shown one by one in a wave's verdicts; more are summed up (verdictLines). */
export const PASSING_SHOWN = 20;

/**
 * A wave's verdicts in words: every project that fails, each with its figures; the passing ones
 * each too while there are at most PASSING_SHOWN of them. A larger wave shows the passing ones
 * nearest the limit (the highest ERROR share first) and sums up the rest, by status, naming the
 * rollout journal that holds every project's figures: a wave of 900 projects is not 900 lines.
 */
export function verdictLines(
  label: string,
  verdicts: readonly ProjectHealth[],
  journalPath: string,
): string[] {
  const line = (verdict: ProjectHealth) =>
    `${label}: project ${verdict.project} ${verdict.passed ? "passes" : "FAILS"}: ${verdict.summary}`;
  const passing = verdicts.filter((verdict) => verdict.passed);
  if (passing.length <= PASSING_SHOWN) return verdicts.map(line);
  const shown = new Set(
    [...passing].sort((a, b) => nearLimit(b.figures) - nearLimit(a.figures)).slice(0, PASSING_SHOWN / 2),
  );
  const rest = passing.filter((verdict) => !shown.has(verdict));
  const byStatus = new Map<string, number>();
  for (const verdict of rest) byStatus.set(verdict.status, (byStatus.get(verdict.status) ?? 0) + 1);
  const statuses = [...byStatus].map(([status, count]) => `${count} ${STATUS_WORDS[status] ?? status}`);
  return [
    ...verdicts.filter((verdict) => !verdict.passed || shown.has(verdict)).map(line),
    `${label}: ${rest.length} more projects pass (${statuses.join("; ")}); each one's figures are in the rollout journal ${journalPath}`,
  ];
}

/**
 * How near a verdict's figures come to failing, to show the nearest first: the highest ERROR share
 * (`ratio`, `logs_ratio`), or a value against its `max` (`value`, `prometheus_value`).
 */
function nearLimit(figures: Readonly<Record<string, number>>): number {
  let near = 0;
  for (const [key, value] of Object.entries(figures)) {
    if (key.endsWith("ratio")) near = Math.max(near, value);
    const max = key.endsWith("value") ? figures[`${key.slice(0, -"value".length)}max`] : undefined;
    if (max !== undefined && max > 0) near = Math.max(near, value / max);
  }
  return near;
}

const STATUS_WORDS: Record<string, string> = {
  pass: "within the limits",
  unknown: "of unknown health, which allow_unknown lets pass",
  nothing_to_judge: "with nothing to judge",
};

/** The plugin configs the rollout's plan creates or updates, which the gate will judge (judgedConfigs). */
export function rolloutTargets(plan: Plan): RolloutTarget[] {
  return plan.changes.flatMap((change) => {
    if (change.action === "delete" || change.name === null) return [];
    const plugin = change.fields.plugin?.to;
    return [
      {
        project: change.project,
        family: change.family,
        name: change.name,
        ...(change.id === null ? {} : { id: change.id }),
        ...(typeof plugin === "number" ? { plugin } : {}),
      },
    ];
  });
}

export async function runRollout(rollout: PlanRollout, parts: RolloutParts): Promise<RolloutOutcome> {
  // The wave the run is in, for the event of an error that ends it there.
  const position = { index: 0 };
  let outcome: RolloutOutcome;
  try {
    outcome = await runWaves(rollout, parts, position);
  } catch (error) {
    const wave = rollout.waves[position.index]?.name ?? "";
    parts.onEvent({
      event: "rollout_stopped",
      wave,
      index: position.index,
      reason: "error",
      detail: error instanceof Error ? error.message : String(error),
    });
    // The error itself follows (the CLI's last line); what it means for the rollout is said here.
    parts.say(
      `wave ${position.index + 1}/${rollout.waves.length} "${wave}": stopped by the error below; nothing more is written, and the rollout journal keeps what was done: apply the manifest again to finish the rollout (a wave written and not yet judged is judged first)`,
    );
    throw error;
  }
  // Those watching the events (a webhook, the metrics file) hear of a rollout that stopped short
  // of a verdict too, not only of its waves' starts: a stop is what they are there to notice.
  if (outcome.result !== "complete" && outcome.result !== "halted") {
    const index = rollout.waves.findIndex((wave) => wave.name === outcome.wave);
    parts.onEvent({
      event: "rollout_stopped",
      wave: outcome.wave,
      index,
      reason: outcome.result,
      detail: stopDetail(outcome),
    });
  }
  return outcome;
}

/** In words, why a rollout stopped in a wave, for its event. */
function stopDetail(outcome: Exclude<RolloutOutcome, { result: "complete" | "halted" }>): string {
  switch (outcome.result) {
    case "stopped": {
      const { failed, unknown, skipped, interrupted } = outcome.report;
      return interrupted
        ? "its writes were interrupted"
        : `its writes did not all succeed: ${failed} failed, ${unknown} unknown, ${skipped} not started`;
    }
    case "not_as_planned":
      return `re-read ${outcome.when === "written" ? "after its writes" : "when its bake ended"}, ${outcome.projects.length === 1 ? "project" : "projects"} ${outcome.projects.join(", ")} not as planned`;
    case "changed":
      return `its projects changed since the plan was made: ${firstOf(outcome.reasons, 3, "; ")}`;
    case "interrupted":
      return `interrupted by a signal ${STAGE_WORDS[outcome.stage]}`;
  }
}

async function runWaves(
  rollout: PlanRollout,
  parts: RolloutParts,
  position: { index: number },
): Promise<RolloutOutcome> {
  const { journal } = parts;
  const state = journal.state;
  const reports: ApplyReport[] = [];

  if (state.halted !== undefined) return finishHalt(rollout, parts, reports);

  // The run's plan was made from the state read at its start: once a bake has passed, a wave's
  // lists are read again before its writes, so that hours later it writes nothing the world has
  // moved away from (a record someone else created under a name it creates, one they changed).
  let baked = false;
  for (const [index, wave] of rollout.waves.entries()) {
    const waveState = state.waves[index];
    if (waveState?.judged?.healthy) continue;
    position.index = index;
    const label = `wave ${index + 1}/${rollout.waves.length} "${wave.name}"`;
    if (wave.projects.length === 0) {
      parts.say(`${label}: no project of the plan; nothing to write.`);
      continue;
    }

    let current: CurrentState | undefined;
    // The lists as first seen after the wave's writes (or, resumed, when this run saw them again):
    // the configs' `updated_at` there are the wave's writes, as the service stamped them.
    let seenWritten: CurrentState | undefined;
    // When `current` was read, and which families of the wave's projects (undefined: all).
    let seenAt = parts.now();
    let families: ReadonlySet<string> | undefined;
    let written = waveState?.writtenAt !== undefined;
    // The configs judged: those the rollout's first plan creates or updates, and those this run's
    // part of the wave does (a resumed rollout writes this run's plan of the wave's projects).
    let targets = journal.state.header.targets;
    if (written) {
      // Resumed after the wave was written (a run stopped in its bake or judging): its projects
      // are read again whole. One no longer as written (rolled back by hand since, or changed) is
      // not judged by what it no longer holds: the wave is written again, and baked from there.
      const seen = await whileNotInterrupted(parts, () => parts.planProjects(wave.projects));
      if (seen === undefined) return { result: "interrupted", wave: wave.name, stage: "reread", reports };
      const unsettled = [...projectsWritten(seen.plan)];
      if (unsettled.length === 0) {
        current = seen.current;
        seenWritten = seen.current;
        seenAt = parts.now();
      } else {
        parts.say(
          `${label}: ${describeProjects(unsettled)} no longer as the wave wrote ${unsettled.length === 1 ? "it" : "them"} (rolled back or changed since?): the wave is written again`,
        );
        written = false;
      }
    }
    if (!written) {
      // A wave started by a run that was killed is seen again whole: what that run wrote is in no
      // plan of this one. Otherwise the families this wave changes are what is read again.
      const resumedWave = (waveState?.journals.length ?? 0) > 0;
      // A signal during the read (it can take a while for a large wave) starts no wave: the reads
      // not sent yet are refused, and those answered are of no use.
      const fresh = await whileNotInterrupted(parts, () => parts.planWave(wave.projects, baked));
      if (fresh === undefined) return { result: "interrupted", wave: wave.name, stage: "check", reports };
      if (fresh.changed !== undefined)
        return { result: "changed", wave: wave.name, reasons: fresh.changed, reports };
      const changed = changedFamilies(fresh.plan);
      targets = [...targets, ...rolloutTargets(fresh.plan)];
      if (hasChanges(fresh.plan)) {
        const path = parts.newJournalPath(`wave-${index + 1}`);
        await journal.append(
          { kind: "wave_started", wave: index, journal: path, at: iso(parts.now()) },
          parts.cwd,
        );
        parts.onEvent({ event: "rollout_wave_started", wave: wave.name, index, projects: wave.projects });
        parts.say(`${label}: writing ${describeProjects(wave.projects)}; journal ${path}`);
        const report = await parts.applyWave(fresh.plan, fresh.current, path);
        reports.push(report);
        if (report.interrupted || report.failed > 0 || report.unknown > 0)
          return { result: "stopped", wave: wave.name, report, reports };
      }
      // The bake counts from the writes: the re-read below is part of it, not before it. A signal
      // after the last write (or during the re-read) leaves the wave to be seen again by the next run.
      const wroteAt = parts.now();
      families = resumedWave || changed.size === 0 ? undefined : changed;
      const seen = await whileNotInterrupted(parts, () => parts.planProjects(wave.projects, families));
      if (seen === undefined) return { result: "interrupted", wave: wave.name, stage: "reread", reports };
      const unsettled = [...projectsWritten(seen.plan)];
      if (unsettled.length > 0)
        return { result: "not_as_planned", wave: wave.name, projects: unsettled, when: "written", reports };
      current = seen.current;
      seenWritten = seen.current;
      seenAt = parts.now();
      await journal.append({ kind: "wave_written", wave: index, at: iso(wroteAt) }, parts.cwd);
    }
    const writtenAt = state.waves[index]?.writtenAt ?? parts.now();

    const bakeEnd = writtenAt.getTime() + rollout.bakeSeconds * 1000;
    const left = bakeEnd - parts.now().getTime();
    if (left > 0) {
      parts.say(
        `${label}: written and seen as planned; baking ${formatDuration(left)}, until ${new Date(bakeEnd).toISOString()}`,
      );
      try {
        await parts.sleep(left, parts.signal);
      } catch (error) {
        if (parts.signal.aborted) return { result: "interrupted", wave: wave.name, stage: "bake", reports };
        throw error;
      }
    }
    baked = true;
    // Nothing is read in the bake's idle time, though the reads below would fit there: a read made
    // before the bake ends misses a change made after it, to a config the wave is judged on or to
    // a record the next wave writes (test/rollout/run-rollout.test.ts, "a change made as a bake ends").

    // The configs the gate judges are judged as they are when the bake ends, not as they were
    // seen before it: one changed meanwhile (deleted, edited or rolled back by hand) would be
    // judged on what it no longer holds (the logs of a deleted config are an empty page). Such a
    // wave is not judged: the rollout stops, and applying again writes it again. Other changes in
    // its projects (a record of another name) are not the wave's to answer for.
    if (seenAt.getTime() < bakeEnd) {
      const now = await whileNotInterrupted(parts, () => parts.planProjects(wave.projects, families));
      if (now === undefined) return { result: "interrupted", wave: wave.name, stage: "judge", reports };
      const inWave = new Set(wave.projects);
      const judged = targets.filter((target) => inWave.has(target.project));
      const altered = new Set(
        now.plan.changes
          .filter((change) =>
            judged.some(
              (target) =>
                target.project === change.project &&
                target.family === change.family &&
                sameName(change.name, target.name),
            ),
          )
          .map((change) => change.project),
      );
      if (altered.size > 0)
        return { result: "not_as_planned", wave: wave.name, projects: [...altered], when: "baked", reports };
      current = now.current;
    }
    if (current === undefined) throw new Error("a wave judged before it was seen as planned");
    // Each project's targets and lists, gathered once: a wave of 900 projects is not 900 passes
    // over every target and every list.
    const targetsOf = groupBy(targets, (target) => target.project);
    const listsOf = groupBy(current.families, (family) => family.project);
    const writtenListsOf = groupBy(seenWritten?.families ?? [], (family) => family.project);
    const toJudge = wave.projects.map((project) => ({
      project,
      configs: judgedConfigs(
        targetsOf.get(project) ?? [],
        project,
        { families: listsOf.get(project) ?? [] },
        { families: writtenListsOf.get(project) ?? [] },
      ),
    }));
    let verdicts: ProjectHealth[];
    try {
      verdicts = await parts.gate.judge(
        { wave: wave.name, since: writtenAt, projects: toJudge },
        parts.signal,
      );
    } catch (error) {
      if (parts.signal.aborted) return { result: "interrupted", wave: wave.name, stage: "judge", reports };
      throw error;
    }
    const failing = verdicts.filter((verdict) => !verdict.passed);
    const healthy = failing.length <= rollout.failureBudget;
    await journal.append(
      { kind: "wave_judged", wave: index, at: iso(parts.now()), healthy, verdicts },
      parts.cwd,
    );
    for (const line of verdictLines(label, verdicts, journal.path)) parts.say(line);
    if (healthy) {
      parts.say(
        `${label}: healthy (${failing.length} failing, budget ${rollout.failureBudget})${index + 1 < rollout.waves.length ? "; the next wave starts" : ""}`,
      );
      parts.onEvent({ event: "rollout_wave_passed", wave: wave.name, index, verdicts });
      continue;
    }
    await journal.append(
      {
        kind: "halted",
        wave: index,
        at: iso(parts.now()),
        failing: failing.map((verdict) => verdict.project),
      },
      parts.cwd,
    );
    parts.onEvent({ event: "rollout_halted", wave: wave.name, index, failing });
    parts.say(
      `${label}: ${plural(failing.length, "failing project")}, over the failure budget of ${rollout.failureBudget}: the rollout halts; nothing more is written`,
    );
    return finishHalt(rollout, parts, reports);
  }
  await journal.append({ kind: "end", at: iso(parts.now()), result: "complete" }, parts.cwd);
  parts.onEvent({ event: "rollout_completed", waves: rollout.waves.length });
  const unjudged = journal.state.waves.flatMap(
    (wave) =>
      wave.judged?.verdicts
        .filter((verdict) => verdict.status === "nothing_to_judge")
        .map((verdict) => verdict.project) ?? [],
  );
  return { result: "complete", reports, unjudged: [...new Set(unjudged)] };
}

/** After a halt: the rollback of every wave applied so far, newest first, when asked for. */
async function finishHalt(
  rollout: PlanRollout,
  parts: RolloutParts,
  reports: ApplyReport[],
): Promise<RolloutOutcome> {
  const { journal } = parts;
  const halted = journal.state.halted;
  const haltedWave = halted === undefined ? 0 : halted.wave;
  const failing =
    journal.state.waves[haltedWave]?.judged?.verdicts.filter((verdict) => !verdict.passed) ?? [];
  const undone: UndoneWave[] = [];
  const rollBack = rollout.onFailure === "rollback";
  if (rollBack) {
    const toUndo = wavesToUndo(journal.state, haltedWave);
    for (const [position, { index, journals }] of toUndo.entries()) {
      const wave = rollout.waves[index];
      if (wave === undefined) continue;
      parts.say(`rolling back wave "${wave.name}" (${describeProjects(wave.projects)})`);
      let complete = true;
      let byHand: string | undefined;
      const summaries: string[] = [];
      // A wave resumed after a kill wrote through more than one journal: the newest is undone first.
      // A signal stops the rollback as it stops an apply (the client sends nothing more): the halt
      // is in the journal, and the next apply of the manifest finishes the rollback.
      for (const path of journals) {
        const result = await whileNotInterrupted(parts, () => parts.rollbackJournal(path));
        if (result === undefined) {
          const left = toUndo.slice(position + 1).flatMap((entry) => rollout.waves[entry.index]?.name ?? []);
          return {
            result: "interrupted",
            wave: rollout.waves[haltedWave]?.name ?? "",
            stage: "rollback",
            reports,
            halt: { failing, undone, stoppedIn: wave.name, left },
          };
        }
        summaries.push(result.summary);
        complete &&= result.complete;
        byHand ??= result.byHand;
      }
      await journal.append(
        { kind: "wave_rolled_back", wave: index, at: iso(parts.now()), complete },
        parts.cwd,
      );
      parts.onEvent({ event: "rollout_rolled_back", wave: wave.name, index, complete });
      undone.push({
        wave: wave.name,
        complete,
        summary: summaries.join("; "),
        ...(byHand ? { byHand } : {}),
      });
      if (!complete) break;
    }
  }
  const allUndone = undone.every((entry) => entry.complete);
  if (!rollBack || allUndone)
    await journal.append({ kind: "end", at: iso(parts.now()), result: "halted" }, parts.cwd);
  return {
    result: "halted",
    wave: rollout.waves[haltedWave]?.name ?? "",
    failing,
    undone,
    rolledBack: rollBack && allUndone,
    reports,
  };
}

/**
 * The configs of `project` that the rollout's plan creates or updates, found in the re-read: an
 * update's record by its id, a create's as a lost create is found (isRecordOfCreate: its name as the
 * service keeps it, and its plugin), never another family's record of that name that the list also
 * shows. A journal of an older pcsync names targets by name alone: found by their name's identity.
 * Each one's write time is its `updated_at` in `written` (the lists read right after the wave's
 * writes) when that read holds it: a later read's may have moved since, with a change the manifest
 * does not manage (the service's, or someone's), and the window the gate counts would shrink.
 */
export function judgedConfigs(
  targets: readonly RolloutTarget[],
  project: string,
  current: CurrentState,
  written: CurrentState = current,
): JudgedConfig[] {
  const configs: JudgedConfig[] = [];
  for (const target of targets) {
    if (target.project !== project) continue;
    const family = current.families.find(ofFamily(project, target.family));
    const others = idsOfOtherFamiliesIn(current, project, target.family);
    const record = family?.records.find((entry) =>
      target.id !== undefined
        ? entry.id === target.id
        : target.plugin !== undefined
          ? isRecordOfCreate({ name: target.name, plugin: target.plugin }, entry)
          : !others.has(entry.id) && sameName(entry.name, target.name),
    );
    if (record === undefined || configs.some((config) => config.id === record.id)) continue;
    const wrote = written.families
      .find(ofFamily(project, target.family))
      ?.records.find((entry) => entry.id === record.id);
    const writtenAt = timeOf(wrote?.updated_at ?? record.updated_at);
    configs.push({
      family: target.family,
      id: record.id,
      name: record.name,
      enabled: record.enabled !== false,
      frontendApp: !getFamily(ownFamily(current, project, target.family, record.id)).hasLogs,
      ...(writtenAt === undefined ? {} : { writtenAt }),
    });
  }
  return configs;
}

/**
 * The family a record of `family`'s list belongs to: one whose records that list also shows
 * (posthog-2024's plugin_configs lists the frontend apps) when the project's list of it holds the
 * id, `family` itself otherwise.
 */
function ownFamily(current: CurrentState, project: string, family: FamilyName, id: number): FamilyName {
  const shownBy = familiesShownBy(family).find((shown) =>
    current.families.find(ofFamily(project, shown))?.records.some((record) => record.id === id),
  );
  return shownBy ?? family;
}

/** An ISO-8601 time the service sent, as a Date; undefined when it sent none it could parse. */
function timeOf(value: unknown): Date | undefined {
  const ms = typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/**
 * `read()`'s result; undefined when a signal came before it ended, or before it began (it may then
 * have failed for that reason: the client sends no request once the run is interrupted).
 */
async function whileNotInterrupted<T>(parts: RolloutParts, read: () => Promise<T>): Promise<T | undefined> {
  if (parts.signal.aborted) return undefined;
  try {
    const result = await read();
    return parts.signal.aborted ? undefined : result;
  } catch (error) {
    if (parts.signal.aborted) return undefined;
    throw error;
  }
}

/**
 * The lists a wave's re-read reads: those of the families its plan changes, and, where it creates a
 * record in a family whose list also shows another's (posthog-2024's plugin_configs lists the
 * frontend apps), that other family's too: a record made there is in no list read before, and only
 * that list tells what it is (a frontend app is not judged on logs it never has).
 */
function changedFamilies(plan: Plan): Set<string> {
  const keys = [...plan.changes, ...plan.reorders].map((item) => familyKey(item.project, item.family));
  for (const change of plan.changes)
    if (change.action === "create")
      for (const shown of familiesShownBy(change.family)) keys.push(familyKey(change.project, shown));
  return new Set(keys);
}

export function describeProjects(projects: readonly string[]): string {
  return `${projects.length === 1 ? "project" : `${projects.length} projects:`} ${firstOf(projects, 10, ", ")}`;
}

/** The first `shown` items, joined, and how many more there are. */
function firstOf(items: readonly string[], shown: number, separator: string): string {
  const more = items.length > shown ? ` and ${items.length - shown} more` : "";
  return `${items.slice(0, shown).join(separator)}${more}`;
}

function iso(date: Date): string {
  return date.toISOString();
}
