// The waves of a rollout over a plan's projects: every project in exactly one wave, named ones where
// they are named, each `percent` wave reaching its share (rounded up), and the same waves whatever
// order the projects come in, so that plan and apply agree.

import { describe, expect, it } from "vitest";
import type { RolloutSpec } from "../../src/manifest/types.js";
import { assignWaves } from "../../src/plan/rollout-waves.js";
import { fc } from "../support/fast-check.js";

const source = { file: "pcsync.yaml", line: 1, col: 1 };

function spec(waves: RolloutSpec["waves"]): RolloutSpec {
  return {
    waves,
    bakeMs: 1000,
    health: { logs: { maxErrorRatio: 0.05, minEntries: 20, allowUnknown: false } },
    failureBudget: 0,
    onFailure: "rollback",
    source,
  };
}

const projectIds = fc.uniqueArray(fc.integer({ min: 1, max: 100_000 }).map(String), {
  minLength: 0,
  maxLength: 60,
});

describe("rollout waves", () => {
  it("place every project once, named first, each percent wave at its rounded-up share, in any input order", () => {
    fc.assert(
      fc.property(
        projectIds,
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 0, maxLength: 4 }),
        fc.nat(),
        (projects, rawPercents, seed) => {
          const named = projects.slice(0, seed % 3);
          const percents = [...rawPercents].sort((a, b) => a - b);
          const waves: RolloutSpec["waves"] = [
            ...(named.length > 0 ? [{ name: "canary", projects: named, source }] : []),
            ...percents.map((percent, index) => ({ name: `w${index}`, percent, source })),
            { name: "rest", percent: 100, source },
          ];
          const { rollout, unassigned } = assignWaves(spec(waves), new Set(projects));
          expect(unassigned).toEqual([]);
          const placed = rollout.waves.flatMap((wave) => wave.projects);
          expect([...placed].sort()).toEqual([...projects].sort());
          if (named.length > 0) expect(rollout.waves[0]?.projects).toEqual(named);
          let reached = 0;
          rollout.waves.forEach((wave, index) => {
            reached += wave.projects.length;
            const percent = waves[index]?.percent;
            if (percent !== undefined)
              expect(reached).toBe(
                Math.max(named.length, Math.ceil((percent / 100) * projects.length - 1e-9)),
              );
          });
          const shuffled = [...projects].reverse();
          expect(assignWaves(spec(waves), new Set(shuffled)).rollout).toEqual(rollout);
        },
      ),
    );
  });

  it("leave out projects no wave reaches, for plan to refuse, and skip named projects the plan does not change", () => {
    const { rollout, unassigned } = assignWaves(
      spec([
        { name: "canary", projects: ["7", "1"], source },
        { name: "half", percent: 50, source },
      ]),
      new Set(["1", "2", "3", "4"]),
    );
    expect(rollout.waves[0]).toEqual({ name: "canary", projects: ["1"] });
    expect(rollout.waves[1]?.projects).toHaveLength(1);
    expect(unassigned).toHaveLength(2);
  });
});
