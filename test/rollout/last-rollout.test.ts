// What plan and apply say of a manifest's rollout that did not end: where it stopped, whether the
// wave it stopped in still holds what it wrote, and which of the rollout: block's settings it keeps
// until it ends, where the manifest now says otherwise (a rollout is finished as it started). And
// that a rollout's identity is the change: the rollout: block is not part of it.

import { describe, expect, it } from "vitest";
import type { DesiredState, RolloutSpec } from "../../src/manifest/index.js";
import type { Plan, PlanRollout } from "../../src/plan/types.js";
import { keptSettings, unfinishedNotice } from "../../src/rollout/last-rollout.js";
import { type RolloutState, rolloutDigest } from "../../src/rollout/rollout-journal.js";

const STARTED: PlanRollout = {
  waves: [
    { name: "canary", projects: ["1"] },
    { name: "rest", projects: ["2"] },
  ],
  bakeSeconds: 2,
  health: { logs: { maxErrorRatio: 0.05, minEntries: 2, allowUnknown: false } },
  failureBudget: 0,
  onFailure: "halt",
};

const SOURCE = { file: "pcsync.yaml", line: 3, col: 1 };

function spec(changes: Partial<RolloutSpec> = {}): RolloutSpec {
  return {
    waves: [
      { name: "canary", projects: ["1"], source: SOURCE },
      { name: "rest", percent: 100, source: SOURCE },
    ],
    bakeMs: 2000,
    health: { logs: { maxErrorRatio: 0.05, minEntries: 2, allowUnknown: false } },
    failureBudget: 0,
    onFailure: "halt",
    source: SOURCE,
    ...changes,
  };
}

/** Stopped in the canary after its writes, before its verdict. */
const STOPPED: RolloutState = {
  path: ".pcsync/rollout/r.jsonl",
  header: {
    kind: "rollout",
    version: 1,
    server: "http://service",
    digest: "d",
    startedAt: "2026-01-01T00:00:00.000Z",
    rollout: STARTED,
    targets: [],
  },
  waves: [{ journals: [".pcsync/journal/w1.jsonl"], writtenAt: new Date("2026-01-01T00:00:01.000Z") }],
};

function planWriting(projects: readonly string[]): Pick<Plan, "changes" | "reorders"> {
  return {
    changes: projects.map((project) => ({
      action: "update" as const,
      project,
      family: "plugin_configs" as const,
      name: "GeoIP",
      id: 5,
      fields: { description: { from: "v1", to: "v2" } },
      source: "pcsync.yaml:9",
    })),
    reorders: [],
  };
}

describe("the note on a rollout that did not end", () => {
  it("says the wave is baked for what is left of its bake while its projects hold what it wrote", () => {
    expect(unfinishedNotice(STOPPED, planWriting(["2"]), spec()).text).toContain(
      'it stopped in wave 1 "canary", written, and not yet judged: apply bakes it for what is left of its bake',
    );
  });

  it("says the wave is written again when its projects no longer hold it (a rollback by hand since)", () => {
    expect(unfinishedNotice(STOPPED, planWriting(["1", "2"]), spec()).text).toContain(
      'it stopped in wave 1 "canary", written, and not yet judged, but its projects no longer hold all it wrote (rolled back or changed since?): apply writes it again',
    );
  });

  it("names the settings the rollout keeps where the manifest's rollout: now differs", () => {
    expect(unfinishedNotice(STOPPED, planWriting([]), spec()).text).not.toContain("keeps");
    expect(
      unfinishedNotice(
        STOPPED,
        planWriting([]),
        spec({ bakeMs: 3000, onFailure: "rollback", failureBudget: 1 }),
      ).text,
    ).toMatch(
      /; it keeps the rollout: settings it started with until it ends: bake 2s \(the manifest now says 3s\), on_failure halt \(now rollback\), failure_budget 0 \(now 1\)$/,
    );
  });
});

describe("the settings a rollout keeps", () => {
  it.each([
    ["none, where nothing differs", spec(), ""],
    [
      "its health",
      spec({ health: { logs: { maxErrorRatio: 0.5, minEntries: 2, allowUnknown: false } } }),
      ": health",
    ],
    ["its waves", spec({ waves: [{ name: "canary", projects: ["1"], source: SOURCE }] }), ": waves"],
  ])("%s", (_what, manifest, end) => {
    const kept = keptSettings(STARTED, manifest);
    if (end === "") expect(kept).toBe("");
    else expect(kept.endsWith(end)).toBe(true);
  });
});

describe("a rollout's identity", () => {
  const desired = (rollout?: RolloutSpec): DesiredState => ({
    families: [],
    ...(rollout === undefined ? {} : { rollout }),
  });

  it("is the change: a new bake, budget or on_failure alone is the same rollout (a halt stays a halt)", () => {
    expect(rolloutDigest("http://service", desired(spec({ bakeMs: 9000, onFailure: "rollback" })))).toBe(
      rolloutDigest("http://service", desired(spec())),
    );
  });

  it("is the server's too", () => {
    expect(rolloutDigest("http://a", desired(spec()))).not.toBe(rolloutDigest("http://b", desired(spec())));
  });
});
