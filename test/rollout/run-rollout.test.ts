// The rollout's steps in time, on a clock of its own: the bake counts from a wave's writes (the
// re-read that proves the wave is part of it), the gate judges from the writes, each wave is read
// again as its bake ends and judged as it is then, and a wave whose re-read outlasts its bake is
// judged at once, never before it was seen as planned. The bake's idle time makes the reads that
// come after it (the next wave's check, as far as it fits, then the wave's own re-read), timed by
// the run's pace to end as the bake ends: the verdict comes when the bake ends, not after them.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApplyReport } from "../../src/apply/types.js";
import type { CurrentFamily, CurrentState, Plan, PlanRollout } from "../../src/plan/types.js";
import type { WaveToJudge } from "../../src/rollout/health-gate.js";
import { RolloutJournal, type RolloutTarget, readRolloutJournal } from "../../src/rollout/rollout-journal.js";
import { type RolloutEvent, type RolloutParts, runRollout } from "../../src/rollout/run-rollout.js";

const ROLLOUT: PlanRollout = {
  waves: [
    { name: "canary", projects: ["1"] },
    { name: "rest", projects: ["2"] },
  ],
  bakeSeconds: 2,
  health: { logs: { maxErrorRatio: 0.05, minEntries: 0, allowUnknown: false } },
  failureBudget: 0,
  onFailure: "rollback",
};

function planOf(projects: readonly string[]): Plan {
  return {
    format: "pcsync-plan",
    version: 2,
    summary: { create: 0, update: projects.length, delete: 0, reorder: 0 },
    changes: projects.map((project) => ({
      action: "update" as const,
      project,
      family: "plugin_configs" as const,
      name: "GeoIP",
      id: Number(project),
      fields: { description: { from: null, to: "v2" } },
      source: "pcsync.yaml:5",
    })),
    reorders: [],
    families: [],
    fingerprints: {},
    guards: [],
  };
}

const EMPTY: CurrentState = { families: [] };
const DONE: ApplyReport = {
  outcomes: [],
  done: 1,
  failed: 0,
  skipped: 0,
  unknown: 0,
  unchecked: 0,
  interrupted: false,
};

/** A rollout whose writes take `writeMs` and whose re-read takes `rereadMs` of a fake clock. */
async function runTimed(
  writeMs: number,
  rereadMs: number,
  options: {
    failJudgeOf?: string;
    seen?: CurrentState;
    targets?: RolloutTarget[];
    rollout?: PlanRollout;
    /** The check of a wave's lists before its writes: its time per project (rereadMs in all, else). */
    checkMsPerProject?: number;
    /** What the check of these projects finds; it may throw. */
    check?: (projects: readonly string[], call: number) => { changed: string[] };
    /** A signal when the clock reaches this time (ms from the start). */
    abortAt?: number;
  } = {},
) {
  const rollout = options.rollout ?? ROLLOUT;
  const controller = new AbortController();
  const cwd = await mkdtemp(join(tmpdir(), "pcsync-run-rollout-"));
  try {
    let clock = Date.parse("2026-01-01T00:00:00Z");
    const events: string[] = [];
    const sent: RolloutEvent[] = [];
    const said: string[] = [];
    const judged: WaveToJudge[] = [];
    const journal = await RolloutJournal.start(cwd, undefined, {
      kind: "rollout",
      version: 1,
      server: "http://service",
      digest: "d",
      startedAt: new Date(clock).toISOString(),
      rollout,
      targets: options.targets ?? [],
    });
    const at = () => `${(clock - Date.parse("2026-01-01T00:00:00Z")) / 1000}s`;
    let checks = 0;
    // The clock goes on; a signal comes when it reaches `abortAt`, and what was under way fails.
    const passTime = (ms: number) => {
      const abortAt =
        options.abortAt === undefined ? undefined : Date.parse("2026-01-01T00:00:00Z") + options.abortAt;
      if (abortAt !== undefined && clock < abortAt && clock + ms >= abortAt) {
        clock = abortAt;
        controller.abort();
        throw new Error("interrupted");
      }
      clock += ms;
    };
    const parts: RolloutParts = {
      journal,
      cwd,
      planWave: (projects) => ({ plan: planOf(projects), current: EMPTY }),
      async checkProjects(projects) {
        events.push(
          `${at()} check ${projects.length > 3 ? `${projects.length} projects` : projects.join(",")}`,
        );
        const perProject = options.checkMsPerProject;
        passTime(perProject === undefined ? rereadMs : perProject * projects.length);
        checks += 1;
        return { families: [], changed: options.check?.(projects, checks).changed ?? [] };
      },
      async planProjects(projects) {
        events.push(`${at()} re-read ${projects.join(",")}`);
        clock += rereadMs;
        return { plan: planOf([]), current: options.seen ?? EMPTY };
      },
      async applyWave(_plan, _current, path) {
        events.push(`${at()} write ${path}`);
        clock += writeMs;
        return DONE;
      },
      newJournalPath: (label) => label,
      rollbackJournal: async () => ({ complete: true, summary: "" }),
      gate: {
        signal: "logs",
        async judge(wave) {
          events.push(
            `${at()} judge ${wave.wave} since ${(wave.since.getTime() - Date.parse("2026-01-01T00:00:00Z")) / 1000}s`,
          );
          judged.push(wave);
          if (wave.wave === options.failJudgeOf) throw new Error("the logs endpoint answered 500 five times");
          return wave.projects.map(({ project }) => ({
            project,
            status: "pass" as const,
            passed: true,
            figures: {},
            summary: "passes",
          }));
        },
      },
      signal: controller.signal,
      async sleep(ms, signal) {
        events.push(`${at()} bake ${ms / 1000}s`);
        passTime(ms);
        signal.throwIfAborted();
      },
      now: () => new Date(clock),
      say: (line) => said.push(line),
      onEvent: (event) => sent.push(event),
    };
    const outcome = await runRollout(rollout, parts).catch((error: unknown) => error);
    const state = await readRolloutJournal(cwd, journal.path);
    return { outcome, events, judged, state, sent, said };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

describe("a wave's bake", () => {
  it("counts from the writes: the re-read is within it, and the gate judges from the writes", async () => {
    const { outcome, events, state } = await runTimed(300, 500);
    expect(outcome).toMatchObject({ result: "complete" });
    // The bake makes the next wave's check, then the wave's own re-read, each started half as
    // long again before the end as the last read took (0.5 s: 0.75 s), and the gate judges the
    // wave as it was read when the bake ends (2.3 s), not after the reads.
    expect(events).toEqual([
      "0s write wave-1",
      "0.3s re-read 1",
      "0.8s check 2",
      "1.3s bake 0.25s",
      "1.55s re-read 1",
      "2.05s bake 0.25s",
      "2.3s judge canary since 0.3s",
      "2.3s write wave-2",
      "2.6s re-read 2",
      "3.1s bake 0.75s",
      "3.85s re-read 2",
      "4.35s bake 0.25s",
      "4.6s judge rest since 2.6s",
    ]);
    // The journal says when the writes ended, which a resumed run bakes from.
    expect(state.waves.map((wave) => wave.writtenAt?.toISOString())).toEqual([
      "2026-01-01T00:00:00.300Z",
      "2026-01-01T00:00:02.600Z",
    ]);
  });

  it("that the re-read outlasts is not waited for again: the wave is judged once it is seen as planned", async () => {
    const { events } = await runTimed(100, 2500);
    expect(events.slice(0, 3)).toEqual(["0s write wave-1", "0.1s re-read 1", "2.6s judge canary since 0.1s"]);
    expect(events.some((event) => event.includes("bake"))).toBe(false);
  });
});

describe("a rollout that ends short of a verdict", () => {
  it("tells its events' listeners where and why, then ends as it would have (the error goes on)", async () => {
    const { outcome, sent, said } = await runTimed(100, 100, { failJudgeOf: "rest" });
    expect(outcome).toBeInstanceOf(Error);
    // And the user what it means for the rollout, beside the error the CLI shows.
    expect(said.at(-1)).toBe(
      'wave 2/2 "rest": stopped by the error below; nothing more is written, and the rollout journal keeps what was done: apply the manifest again to finish the rollout (a wave written and not yet judged is judged first)',
    );
    expect(sent.map((event) => event.event)).toEqual([
      "rollout_wave_started",
      "rollout_wave_passed",
      "rollout_wave_started",
      "rollout_stopped",
    ]);
    expect(sent.at(-1)).toEqual({
      event: "rollout_stopped",
      wave: "rest",
      index: 1,
      reason: "error",
      detail: "the logs endpoint answered 500 five times",
    });
  });
});

describe("the configs a wave is judged on", () => {
  it("are those the rollout's first plan writes and those this run's part of the wave writes, each once, as the re-read found them", async () => {
    const record = (project: string, enabled: boolean) => ({
      id: Number(project),
      name: "GeoIP",
      plugin: 1,
      enabled,
      order: 1,
      description: "v2",
      deleted: false,
      match_action: null,
      updated_at: "2026-01-01T00:00:00.100Z",
    });
    const seen: CurrentState = {
      families: ["1", "2"].map((project) => ({
        project,
        family: "plugin_configs" as const,
        records: [record(project, project === "1")] as unknown as CurrentFamily["records"],
      })),
    };
    // The first plan (a resumed rollout's header) wrote project 1's GeoIP; this run's plan writes
    // both projects' (planOf): project 2's is judged too, and project 1's once.
    const { judged } = await runTimed(100, 100, {
      seen,
      targets: [{ project: "1", family: "plugin_configs", name: "GeoIP" }],
    });
    expect(judged.map((wave) => wave.projects)).toEqual([
      [
        {
          project: "1",
          configs: [
            {
              family: "plugin_configs",
              id: 1,
              name: "GeoIP",
              enabled: true,
              writtenAt: new Date("2026-01-01T00:00:00.100Z"),
            },
          ],
        },
      ],
      [
        {
          project: "2",
          configs: [
            {
              family: "plugin_configs",
              id: 2,
              name: "GeoIP",
              enabled: false,
              writtenAt: new Date("2026-01-01T00:00:00.100Z"),
            },
          ],
        },
      ],
    ]);
  });
});

describe("the next wave's check, read in the bake before it", () => {
  const wide = (size: number): PlanRollout => ({
    ...ROLLOUT,
    waves: [
      { name: "canary", projects: ["1"] },
      { name: "rest", projects: Array.from({ length: size }, (_, index) => String(index + 2)) },
    ],
  });

  it("is read as far as it fits, the rest when the wave starts, and never delays the verdict", async () => {
    // 10 ms a project: 200 projects take 2 s, more than the canary's bake leaves after its writes.
    const { outcome, events } = await runTimed(300, 10, { rollout: wide(200), checkMsPerProject: 10 });
    expect(outcome).toMatchObject({ result: "complete" });
    const canary = events.slice(0, events.indexOf("2.3s judge canary since 0.3s") + 1);
    // Each chunk as large as the pace says will end before the canary's own re-read (128 at most),
    // and none of fewer than 8 projects: the rest is left to the wave's start.
    expect(canary.filter((event) => event.includes("check"))).toEqual([
      "0.31s check 128 projects",
      "1.59s check 46 projects",
      "2.05s check 15 projects",
    ]);
    // The canary is judged when its bake ends; the 11 projects left are checked before the writes.
    expect(events.slice(canary.length, canary.length + 2)).toEqual([
      "2.3s check 11 projects",
      "2.41s write wave-2",
    ]);
  });

  it("that fails is made again when the wave starts: the read ahead changes when, never what, is read", async () => {
    const { outcome, events } = await runTimed(300, 500, {
      check: (_projects, call) => {
        if (call === 1) throw new Error("the service answered 503 five times");
        return { changed: [] };
      },
    });
    expect(outcome).toMatchObject({ result: "complete" });
    expect(events.filter((event) => event.includes("check 2"))).toEqual(["0.8s check 2", "2.3s check 2"]);
  });

  it("that finds the wave changed stops the rollout before the wave's writes, once the wave before passes", async () => {
    const { outcome, events, sent } = await runTimed(300, 500, {
      check: () => ({ changed: ['project 2 plugin_configs: "GeoIP" (id 2) was changed since the plan'] }),
    });
    expect(outcome).toMatchObject({
      result: "changed",
      wave: "rest",
      reasons: ['project 2 plugin_configs: "GeoIP" (id 2) was changed since the plan'],
    });
    expect(events.filter((event) => event.includes("write"))).toEqual(["0s write wave-1"]);
    expect(sent.map((event) => event.event)).toEqual([
      "rollout_wave_started",
      "rollout_wave_passed",
      "rollout_stopped",
    ]);
  });

  it("ends with the bake at a signal: nothing more is read or written", async () => {
    const { outcome, events } = await runTimed(300, 10, {
      rollout: wide(200),
      checkMsPerProject: 10,
      abortAt: 1000,
    });
    expect(outcome).toMatchObject({ result: "interrupted", wave: "canary", stage: "bake" });
    expect(events.at(-1)).toBe("0.31s check 128 projects");
    expect(events.some((event) => event.includes("write wave-2") || event.includes("judge"))).toBe(false);
  });
});
