import { describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { Plan } from "../../src/plan/types.js";
import { renderPlan, renderText } from "../../src/render/index.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { captureOutput } from "../support/capture.js";
import { buildRepresentativePlan, LONG_NEW, LONG_OLD } from "../support/plans.js";

function renderToString(plan: Plan, colour: boolean): string {
  const { out, text } = captureOutput();
  renderText(plan, out, { colour });
  return text();
}

const ESC = "\u001b";

function stripAnsi(text: string): string {
  return text
    .split(ESC)
    .map((part, index) => (index === 0 ? part : part.replace(/^\[[0-9]+m/, "")))
    .join("");
}

describe("renderText", () => {
  it("shows creates, updates, deletes, moves, unmanaged records, guards and the summary", () => {
    expect(renderToString(buildRepresentativePlan(), false).split("\n")).toEqual([
      "project 1 / plugin_configs",
      '  + create "Filter"  # pcsync.yaml:12',
      "      plugin: 2",
      "      enabled: true",
      '      description: "Drops bots"',
      "      order: 2",
      '  ~ update "GeoIP" (id 4)  # pcsync.yaml:8',
      "      enabled: false → true",
      '  ~ update "Tagger" (id 5)  # pcsync.yaml:16',
      '      description: "Adds the country {+and city +}of the client…" (word diff)',
      '  - delete "Old | <b>" (id 6)  # pcsync.yaml:3',
      '  ↕ reorder: "GeoIP" (id 4) 3 → 1  # pcsync.yaml:3',
      '  ↕ reorder: "Tagger" (id 5) 2 → 3  # pcsync.yaml:3',
      "",
      "project 1 / pipeline_frontend_apps_configs",
      '  unmanaged: 2 records left alone: "Stray" (id 7), (unnamed) (id 9)',
      "",
      "project 2 / plugin_configs",
      '  - delete "A" (id 30)  # pcsync.yaml:3',
      '  - delete "B" (id 31)  # pcsync.yaml:3',
      "  ! warning: project 2 plugin_configs: prune would delete all 2 records and leave the family empty (pcsync.yaml:3). Use --force if that is really intended.",
      "",
      "Plan: 1 to create, 2 to update, 3 to delete, 2 to reorder.",
      "Warning: 1 safety guard above: apply will refuse this plan unless --force.",
      "",
    ]);
  });

  it("colours markers only when asked: green create, yellow update, red delete, cyan reorder, dim sources", () => {
    const plain = renderToString(buildRepresentativePlan(), false);
    expect(plain).not.toContain(ESC);
    const coloured = renderToString(buildRepresentativePlan(), true);
    expect(coloured).toContain(`${ESC}[32m+ create "Filter"${ESC}[39m  ${ESC}[2m# pcsync.yaml:12${ESC}[22m`);
    expect(coloured).toContain(`${ESC}[33m~ update "GeoIP" (id 4)${ESC}[39m`);
    expect(coloured).toContain(`${ESC}[31m- delete "A" (id 30)${ESC}[39m`);
    expect(coloured).toContain(`${ESC}[36m↕ reorder: "GeoIP" (id 4) 3 → 1${ESC}[39m`);
    expect(coloured).toContain(`${ESC}[32m{+and city +}${ESC}[39m`);
    // Stripped of its codes, the coloured text says exactly what the plain one does.
    expect(stripAnsi(coloured)).toBe(plain);
  });

  it("says so when nothing changes, still noting unmanaged records", () => {
    const desired = {
      families: [desiredFamily("1", "plugin_configs", [desiredConfig({ name: "A", order: 1 })])],
    };
    const inSync = computePlan(desired, {
      families: [{ project: "1", family: "plugin_configs", records: [remoteRecord({ id: 1, name: "A" })] }],
    });
    expect(renderToString(inSync.plan as Plan, false)).toBe(
      "No changes. The remote state matches the manifest.\n",
    );

    const withStrays = computePlan(desired, {
      families: [
        {
          project: "1",
          family: "plugin_configs",
          records: [
            remoteRecord({ id: 1, name: "A" }),
            ...[2, 3, 4, 5, 6, 7, 8].map((id) => remoteRecord({ id, name: `S${id}`, order: id })),
          ],
        },
      ],
    });
    expect(renderToString(withStrays.plan as Plan, false).split("\n")).toEqual([
      "project 1 / plugin_configs",
      '  unmanaged: 7 records left alone: "S2" (id 2), "S3" (id 3), "S4" (id 4), "S5" (id 5), "S6" (id 6) and 2 more',
      "",
      "No changes. The remote state matches the manifest.",
      "",
    ]);
  });

  it("quotes strings, shows null as null, and word-diffs only long strings", () => {
    const { plan } = computePlan(
      {
        families: [
          desiredFamily("1", "plugin_configs", [
            desiredConfig({ name: "A", order: 1, description: null, match_action: 3 }),
            desiredConfig({ name: "B", order: 2, description: "short new" }),
            desiredConfig({ name: "C", order: 3, description: LONG_OLD.replace("region", "country") }),
          ]),
        ],
      },
      {
        families: [
          {
            project: "1",
            family: "plugin_configs",
            records: [
              remoteRecord({ id: 1, name: "A", order: 1, description: "old text", match_action: null }),
              remoteRecord({ id: 2, name: "B", order: 2, description: "short old" }),
              remoteRecord({ id: 3, name: "C", order: 3, description: LONG_OLD }),
            ],
          },
        ],
      },
    );
    const lines = renderToString(plan as Plan, false).split("\n");
    expect(lines).toContain('      description: "old text" → null');
    expect(lines).toContain("      match_action: null → 3");
    expect(lines).toContain('      description: "short old" → "short new"');
    expect(lines).toContain('      description: "…down traffic by [-region-]{+country+}." (word diff)');
    expect(lines.join("\n")).not.toContain(LONG_OLD);
  });

  it("falls back to both values when two long strings share nothing worth a word diff", () => {
    const from = "x".repeat(30_000);
    const plan = planWithUpdate({ description: { from, to: LONG_NEW } });
    const output = renderToString(plan, false);
    expect(output).toContain(`description: "${from}" → "${LONG_NEW}"`);
  });

  it("escapes control characters so a remote name cannot drive the terminal", () => {
    const plan = planWithUpdate({ name: { from: "evil\u001b[2J\u0007", to: "fine" } }, "proj\u001b[31m");
    const output = renderToString(plan, false);
    expect(output).not.toContain(ESC);
    expect(output).not.toContain("\u0007");
    expect(output).toContain('name: "evil\\u001b[2J\\u0007" → "fine"');
    expect(output).toContain("project proj\\u001b[31m / plugin_configs");
  });

  it("is what renderPlan writes for the text format", () => {
    const plan = buildRepresentativePlan();
    const { out, text } = captureOutput();
    renderPlan(plan, "text", out, { colour: false });
    expect(text()).toBe(renderToString(plan, false));
  });
});

function planWithUpdate(fields: Plan["changes"][number]["fields"], project = "1"): Plan {
  return {
    format: "pcsync-plan",
    version: 2,
    summary: { create: 0, update: 1, delete: 0, reorder: 0 },
    changes: [
      {
        action: "update",
        project,
        family: "plugin_configs",
        name: "X",
        id: 1,
        fields,
        source: "pcsync.yaml:5",
      },
    ],
    reorders: [],
    families: [],
    fingerprints: {},
    guards: [],
  };
}
