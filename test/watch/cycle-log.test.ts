// The line a watch cycle prints names what drifts, family by family, in words and in JSON: the
// records (a few in text, more in JSON, the rest counted), the moves of a reorder, and names that
// came from the service made safe to print in both.

import { describe, expect, it } from "vitest";
import type { FamilyName } from "../../src/families.js";
import type { PlannedChange, PlannedReorder } from "../../src/plan/types.js";
import { type CycleReport, type FamilyFinding, formatCycleLine } from "../../src/watch/cycle-log.js";

const AT = new Date("2026-11-29T10:00:00.000Z");

function change(action: PlannedChange["action"], name: string | null, id: number | null): PlannedChange {
  return { action, project: "1", family: "plugin_configs", name, id, fields: {}, source: "m.yaml:1" };
}

function finding(
  project: string,
  changes: PlannedChange[],
  moves = 0,
  family: FamilyName = "plugin_configs",
): FamilyFinding {
  const reorder: PlannedReorder | undefined =
    moves === 0
      ? undefined
      : {
          project,
          family,
          source: "m.yaml:1",
          moves: Array.from({ length: moves }, (_, index) => ({
            id: 100 + index,
            name: `m${index}`,
            plugin: 1,
            from: index,
            to: index + 1,
          })),
        };
  return { project, family, changes: changes.map((each) => ({ ...each, project, family })), reorder };
}

function report(findings: FamilyFinding[]): CycleReport {
  return {
    result: "ok",
    manifestValid: true,
    problems: [],
    findings,
    succeeded: findings.map((each) => each.project),
    healed: 0,
    refused: 0,
    interrupted: false,
  };
}

const text = (findings: FamilyFinding[]) =>
  formatCycleLine({ cycle: 1, report: report(findings), durationMs: 50, at: AT }, "text");
const json = (findings: FamilyFinding[]) =>
  JSON.parse(formatCycleLine({ cycle: 1, report: report(findings), durationMs: 50, at: AT }, "json")) as {
    drift: {
      project: string;
      family: string;
      changes: number;
      moved: number;
      records: unknown[];
      more?: number;
    }[];
  };

describe("a watch cycle's line names the drift", () => {
  it("in sync: the line alone, and an empty drift list", () => {
    expect(text([finding("1", [])])).toBe(
      "2026-11-29T10:00:00.000Z cycle 1 ok in 0.05 s: 1 family, 0 drifting (0 changes)\n",
    );
    expect(json([finding("1", [])]).drift).toEqual([]);
  });

  it("each drifting family on a line of its own: its records by sign, name and id, and the moves", () => {
    const line = text([
      finding("1", [change("update", "GeoIP", 1), change("create", "Filter", null)]),
      finding("2", []),
      finding("3", [change("delete", null, 7)], 2, "pipeline_frontend_apps_configs"),
    ]);
    expect(line.split("\n")).toEqual([
      "2026-11-29T10:00:00.000Z cycle 1 ok in 0.05 s: 3 families, 2 drifting (5 changes)",
      '  drift in project 1 plugin_configs: ~ "GeoIP" (id 1), + "Filter"',
      "  drift in project 3 pipeline_frontend_apps_configs: - (unnamed) (id 7), ↕ 2 records moved",
      "",
    ]);
  });

  it("a few records and families in text, the rest counted; up to 20 records a family in JSON", () => {
    const many = Array.from({ length: 25 }, (_, index) => change("update", `r${index}`, index + 1));
    const families = Array.from({ length: 7 }, (_, index) => finding(String(index + 1), many));
    const lines = text(families).trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 5 + 1);
    expect(lines[1]).toBe(
      '  drift in project 1 plugin_configs: ~ "r0" (id 1), ~ "r1" (id 2), ~ "r2" (id 3), and 22 more',
    );
    expect(lines.at(-1)).toBe("  (and 2 more drifting families)");
    const listed = json(families).drift;
    expect(listed).toHaveLength(7);
    expect(listed[0]).toMatchObject({
      project: "1",
      family: "plugin_configs",
      changes: 25,
      moved: 0,
      more: 5,
    });
    expect(listed[0]?.records).toHaveLength(20);
    expect(listed[0]?.records[0]).toEqual({ action: "update", name: "r0", id: 1 });
  });

  it.each([
    ["an escape sequence", "Geo\u001b[31mIP"],
    ["a workflow command at a line's start", "::error::forged"],
    ["a workflow command mid-line", "x ##[error]forged"],
    ["a bidirectional override", "abc\u202Edef"],
    ["a line break", "one\ntwo"],
    ["a line separator", "one\u2028two"],
  ])("a name with %s is printed inert, and kept as data in JSON", (_what, name) => {
    const findings = [finding("1", [change("delete", name, 3)])];
    const line = text(findings);
    for (const unsafe of ["\u001b", "\u202e", "\u2028"]) expect(line).not.toContain(unsafe);
    expect(line).not.toContain("##[");
    for (const each of line.split("\n")) expect(each.trimStart().startsWith("::")).toBe(false);
    expect(line.trimEnd().split("\n")).toHaveLength(2);
    const raw = formatCycleLine({ cycle: 1, report: report(findings), durationMs: 50, at: AT }, "json");
    for (const unsafe of ["\u001b", "\u202e", "\u2028"]) expect(raw).not.toContain(unsafe);
    expect(raw).not.toContain("##[");
    expect(raw.trimEnd().split("\n")).toHaveLength(1);
    expect(json(findings).drift[0]?.records[0]).toEqual({ action: "delete", name, id: 3 });
  });
});
