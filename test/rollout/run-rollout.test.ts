// The rollout's steps in time, on a clock of its own: the bake counts from a wave's writes (the
// re-read that proves the wave is part of it), the gate judges from the writes, each wave is read
// again when its bake ends and judged as it is then, and a wave whose
// re-read outlasts its bake is judged at once, never before it was seen as planned.

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
    /** The lists each re-read shows, or what they show at that time (ms from the start). */
    seen?: CurrentState | ((atMs: number) => CurrentState);
    targets?: RolloutTarget[];
    /** Someone changes the project's GeoIP at this time (ms from the start): reads from then show it. */
    changed?: { atMs: number; project: string };
  } = {},
) {
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
      rollout: ROLLOUT,
      targets: options.targets ?? [],
    });
    const at = () => `${(clock - Date.parse("2026-01-01T00:00:00Z")) / 1000}s`;
    const changedIn = (projects: readonly string[]) => {
      const { changed } = options;
      const now = clock - Date.parse("2026-01-01T00:00:00Z");
      return changed !== undefined && now >= changed.atMs && projects.includes(changed.project)
        ? [changed.project]
        : [];
    };
    const parts: RolloutParts = {
      journal,
      cwd,
      async planWave(projects, check) {
        if (check && changedIn(projects).length > 0)
          return { changed: changedIn(projects).map((project) => `project ${project}'s GeoIP was changed`) };
        return { plan: planOf(projects), current: EMPTY };
      },
      async planProjects(projects) {
        events.push(`${at()} re-read ${projects.join(",")}`);
        // The read shows the lists as they are when it starts (a change made during it may be missed).
        const differs = changedIn(projects);
        const { seen = EMPTY } = options;
        const current = typeof seen === "function" ? seen(clock - Date.parse("2026-01-01T00:00:00Z")) : seen;
        clock += rereadMs;
        return { plan: planOf(differs), current };
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
      signal: new AbortController().signal,
      async sleep(ms) {
        events.push(`${at()} bake ${ms / 1000}s`);
        clock += ms;
      },
      now: () => new Date(clock),
      say: (line) => said.push(line),
      onEvent: (event) => sent.push(event),
    };
    const outcome = await runRollout(ROLLOUT, parts).catch((error: unknown) => error);
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
    // Each wave is read again when its bake ends, and judged as it is then; the next wave's lists
    // are read after the verdict. Neither read is made earlier, in the bake's idle time: a change
    // made in its last moments would then go unseen (see "a change made as a bake ends" below).
    expect(events).toEqual([
      "0s write wave-1",
      "0.3s re-read 1",
      "0.8s bake 1.5s",
      "2.3s re-read 1",
      "2.8s judge canary since 0.3s",
      "2.8s write wave-2",
      "3.1s re-read 2",
      "3.6s bake 1.5s",
      "5.1s re-read 2",
      "5.6s judge rest since 3.1s",
    ]);
    // The journal says when the writes ended, which a resumed run bakes from.
    expect(state.waves.map((wave) => wave.writtenAt?.toISOString())).toEqual([
      "2026-01-01T00:00:00.300Z",
      "2026-01-01T00:00:03.100Z",
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
              frontendApp: false,
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
              frontendApp: false,
              writtenAt: new Date("2026-01-01T00:00:00.100Z"),
            },
          ],
        },
      ],
    ]);
  });
});

describe("the time a wave's config is judged from", () => {
  it("is its write as the service stamped it, not a later touch in a field the manifest does not manage", async () => {
    // The service stamps the wave's write at 0.1 s (seen by the re-read right after the writes, at
    // 0.1 s); during the bake, at 1 s, something else touches the config (its `config`, say): the
    // re-read when the bake ends sees a later updated_at, and nothing the manifest manages changed.
    const geoip = (updatedAt: string): CurrentState => ({
      families: [
        {
          project: "1",
          family: "plugin_configs",
          records: [
            { id: 1, name: "GeoIP", plugin: 1, enabled: true, order: 1, updated_at: updatedAt },
          ] as unknown as CurrentFamily["records"],
        },
      ],
    });
    const { judged, events } = await runTimed(100, 100, {
      seen: (atMs) => geoip(atMs < 1000 ? "2026-01-01T00:00:00.100Z" : "2026-01-01T00:00:01.000Z"),
    });
    expect(events.slice(0, 5)).toEqual([
      "0s write wave-1",
      "0.1s re-read 1",
      "0.2s bake 1.9s",
      "2.1s re-read 1",
      "2.2s judge canary since 0.1s",
    ]);
    expect(judged[0]?.projects[0]?.configs.map((config) => config.writtenAt?.toISOString())).toEqual([
      "2026-01-01T00:00:00.100Z",
    ]);
  });
});

describe("a change made as a bake ends, 1 ms before", () => {
  it("to a config the wave wrote: the wave is not judged on what it no longer holds", async () => {
    // The canary's bake ends at 2.3 s (its writes ended at 0.3 s).
    const { outcome, events } = await runTimed(300, 500, { changed: { atMs: 2299, project: "1" } });
    expect(outcome).toMatchObject({
      result: "not_as_planned",
      wave: "canary",
      projects: ["1"],
      when: "baked",
    });
    expect(events.some((event) => event.includes("judge"))).toBe(false);
  });

  it("to a record of the next wave: the rollout stops before that wave's writes", async () => {
    const { outcome, events } = await runTimed(300, 500, { changed: { atMs: 2299, project: "2" } });
    expect(outcome).toMatchObject({
      result: "changed",
      wave: "rest",
      reasons: ["project 2's GeoIP was changed"],
    });
    expect(events.filter((event) => event.includes("write"))).toEqual(["0s write wave-1"]);
  });
});
