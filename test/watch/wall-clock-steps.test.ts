// A step of the wall clock (an NTP correction, a VM resumed) must not move any of watch's waits: the
// manifest's settle window, the rollout hold, heal's flapping backoff, the loop's next due time and
// /healthz are measured on the monotonic clock. Each test steps only the wall clock (Date, as
// libfaketime does to the process), through the classes' default clocks.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DesiredState, DriftMode } from "../../src/manifest/index.js";
import { loadManifests } from "../../src/manifest/index.js";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import type { FamilyFinding } from "../../src/watch/cycle-log.js";
import { FlapTracker } from "../../src/watch/heal-flapping.js";
import { RolloutHold } from "../../src/watch/rollout-hold.js";
import { digestManifestFiles, StableManifest } from "../../src/watch/stable-manifest.js";
import { WatchLoop } from "../../src/watch/watch-loop.js";
import { createWatchMetrics } from "../../src/watch/watch-metrics.js";
import { startWatchServer } from "../../src/watch/watch-server.js";
import { createsManifest, names } from "../support/manifest-text.js";
import { temporaryDirectory } from "../support/work-dir.js";

const MINUTE = 60_000;

/** Moves the wall clock (Date.now, new Date) by `ms`; timers and performance.now() go on as before. */
function stepWallClock(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a step of the wall clock", () => {
  it("does not end the manifest's settle window: a half-written manifest is not used", async ({
    onTestFinished,
  }) => {
    const { path, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(path, "pcsync.yaml");
    await writeFile(file, createsManifest(names("cfg", 3)));
    const notices: string[] = [];
    const stable = new StableManifest(
      {
        load: () => loadManifests([file], { env: {}, cwd: path, varFiles: [] }),
        digest: () => digestManifestFiles([file], [], path),
      },
      { stableForMs: 10_000, notice: (line) => notices.push(line) },
    );
    const configs = async () =>
      (await stable.current()).value?.families.flatMap((family) =>
        family.configs.map((config) => String(config.fields.name)),
      );
    expect(await configs()).toEqual(names("cfg", 3));
    // A writer stops mid-file; the wall clock jumps a minute ahead before the next read.
    await writeFile(file, createsManifest(names("cfg", 2)));
    expect(await configs()).toEqual(names("cfg", 3));
    stepWallClock(MINUTE);
    expect(await stable.check()).toBe(false);
    expect(await configs()).toEqual(names("cfg", 3));
    expect(notices.join("\n")).not.toContain("using the new version");
  });

  it("does not end the rollout hold: a version in sync for a moment is not healed back to", () => {
    const hold = new RolloutHold({ settleMs: 15 * MINUTE });
    const desired: Pick<DesiredState, "families" | "owner" | "rollout"> = {
      families: [
        {
          project: "1",
          family: "plugin_configs",
          prune: false,
          explicitOrder: false,
          source: { file: "pcsync.yaml", line: 5, col: 5 },
          configs: [
            {
              fields: { name: "GeoIP", plugin: 1, description: "v2", order: 0 },
              source: { file: "pcsync.yaml", line: 7, col: 9 },
              fieldSources: {},
            },
          ],
        },
      ],
      rollout: { waves: [], bakeMs: 5 * MINUTE } as unknown as NonNullable<DesiredState["rollout"]>,
    };
    const drift: PlannedChange = {
      action: "update",
      project: "1",
      family: "plugin_configs",
      name: "GeoIP",
      id: 5,
      fields: { enabled: { from: false, to: true } },
      source: "pcsync.yaml:7",
    };
    const modes = new Map<string, DriftMode>([["1\u0000plugin_configs", "heal"]]);
    const inSync: FamilyFinding = { project: "1", family: "plugin_configs", changes: [], reorder: undefined };
    // A rollout's only wave leaves the family in sync with v2; the wall clock jumps 20 minutes
    // (past bake + settle) between two cycles that took a second.
    hold.observe([inSync], desired);
    stepWallClock(20 * MINUTE);
    hold.observe([inSync], desired);
    // The wave is rolled back: its drift from v2 is held, not healed back onto the fleet.
    expect(hold.held({ changes: [drift], reorders: [] }, desired, modes)).toHaveLength(1);
  });

  it("does not end a flapping record's backoff", () => {
    const tracker = new FlapTracker({ firstBackoffMs: 10 * MINUTE });
    const change: PlannedChange = {
      action: "update",
      project: "1",
      family: "plugin_configs",
      name: "GeoIP",
      id: 5,
      fields: { enabled: { from: false, to: true } },
      source: "pcsync.yaml:7",
    };
    const plan: Plan = {
      format: "pcsync-plan",
      version: 2,
      summary: { create: 0, update: 1, delete: 0, reorder: 0 },
      changes: [change],
      reorders: [],
      families: [],
      fingerprints: {},
      guards: [],
    };
    const healed: FamilyFinding = {
      project: "1",
      family: "plugin_configs",
      changes: [],
      reorder: undefined,
      healed: { changes: [change], reorder: undefined },
    };
    for (let cycle = 0; cycle < 3; cycle++) tracker.observe([healed], tracker.hold(plan).held);
    // Flapping: left alone for 10 minutes. One cycle leaves it alone, then the wall clock jumps.
    expect(tracker.hold(plan).plan.changes).toEqual([]);
    stepWallClock(20 * MINUTE);
    expect(tracker.hold(plan).plan.changes).toEqual([]);
  });

  it("stepped back during a cycle, does not stretch the wait for the next one", async () => {
    const stop = new AbortController();
    const starts: number[] = [];
    const loop = new WatchLoop({
      intervalMs: 50,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        starts.push(performance.now());
        if (starts.length === 1) stepWallClock(-10 * MINUTE);
        if (starts.length === 2) stop.abort();
      },
    });
    const running = loop.run();
    // Not an interval plus ten minutes: a few seconds is already far beyond the 50 ms interval.
    const late = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), 3_000));
    const ended = await Promise.race([running.then(() => "ran" as const), late]);
    stop.abort();
    expect(ended).toBe("ran");
    expect(starts).toHaveLength(2);
  });

  it("stepped ahead, does not make /healthz say the loop is stuck", async ({ onTestFinished }) => {
    const loop = new WatchLoop({
      intervalMs: MINUTE,
      jitterShare: 0,
      once: true,
      stop: new AbortController().signal,
      cycle: async () => undefined,
    });
    await loop.run();
    const server = await startWatchServer(
      { host: "127.0.0.1", port: 0 },
      createWatchMetrics({ processMetrics: false }),
      { loop, intervalMs: MINUTE, requestBoundMs: 0, ready: () => true, notReadyReason: () => "" },
    );
    onTestFinished(() => server.close());
    // A VM resumed after an hour's pause, or an NTP step: the loop has not missed three intervals.
    stepWallClock(60 * MINUTE);
    const response = await fetch(`${server.url}/healthz`);
    expect([response.status, await response.text()]).toEqual([200, "ok\n"]);
  });
});
