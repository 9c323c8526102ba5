// A wave's verdicts in words: each failing project always, each passing one while there are few;
// a large wave shows the passing projects nearest the limit and sums up the rest by status.

import { describe, expect, it } from "vitest";
import type { ProjectHealth } from "../../src/rollout/health-gate.js";
import { PASSING_SHOWN, verdictLines } from "../../src/rollout/run-rollout.js";

const LABEL = 'wave 3/3 "rest"';
const JOURNAL = ".pcsync/rollout/r.jsonl";

function verdict(
  project: number,
  status: ProjectHealth["status"],
  figures: Record<string, number>,
): ProjectHealth {
  const passed = status !== "fail";
  return { project: String(project), status, passed, figures, summary: `figures of ${project}` };
}

const passing = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => verdict(from + index, "pass", { ratio: 0.001 * (index % 7) }));

describe("verdictLines", () => {
  it("shows each project of a wave with at most PASSING_SHOWN passing ones", () => {
    const verdicts = [...passing(PASSING_SHOWN), verdict(99, "fail", { ratio: 0.5 })];
    const lines = verdictLines(LABEL, verdicts, JOURNAL);
    expect(lines).toHaveLength(PASSING_SHOWN + 1);
    expect(lines[0]).toBe(`${LABEL}: project 1 passes: figures of 1`);
    expect(lines.at(-1)).toBe(`${LABEL}: project 99 FAILS: figures of 99`);
  });

  it("sums up a large wave: every failing project, the passing ones nearest the limit, the rest by status", () => {
    const verdicts = [
      ...passing(880),
      ...Array.from({ length: 15 }, (_, index) => verdict(900 + index, "unknown", { entries: 0, ratio: 0 })),
      verdict(950, "nothing_to_judge", {}),
      verdict(960, "fail", { ratio: 0.4 }),
      verdict(961, "fail", { ratio: 0.2 }),
      verdict(970, "pass", { ratio: 0.049 }),
    ];
    const lines = verdictLines(LABEL, verdicts, JOURNAL);
    const shownPassing = lines.filter((line) => line.includes(" passes: "));
    expect(shownPassing).toHaveLength(PASSING_SHOWN / 2);
    // The nearest the limit first in the choice, but listed in the wave's order.
    expect(shownPassing.at(-1)).toBe(`${LABEL}: project 970 passes: figures of 970`);
    expect(lines.filter((line) => line.includes(" FAILS: "))).toEqual([
      `${LABEL}: project 960 FAILS: figures of 960`,
      `${LABEL}: project 961 FAILS: figures of 961`,
    ]);
    const rest = 880 + 15 + 1 + 1 - PASSING_SHOWN / 2;
    expect(lines.at(-1)).toBe(
      `${LABEL}: ${rest} more projects pass (${880 - (PASSING_SHOWN / 2 - 1)} within the limits; 15 of unknown health, which allow_unknown lets pass; 1 with nothing to judge); each one's figures are in the rollout journal ${JOURNAL}`,
    );
    expect(lines).toHaveLength(2 + PASSING_SHOWN / 2 + 1);
  });

  it("weighs a value against its max, as a Prometheus signal gives them", () => {
    const verdicts = [
      ...Array.from({ length: PASSING_SHOWN }, (_, index) =>
        verdict(index + 1, "pass", { prometheus_value: 1, prometheus_max: 100 }),
      ),
      verdict(500, "pass", { prometheus_value: 90, prometheus_max: 100, logs_ratio: 0 }),
    ];
    const lines = verdictLines(LABEL, verdicts, JOURNAL);
    expect(lines.some((line) => line.includes("project 500 passes"))).toBe(true);
  });
});
