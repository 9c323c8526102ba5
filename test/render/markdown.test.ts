import { describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import { PLAN_COMMENT_MARKER, renderJson, renderMarkdown, renderText } from "../../src/render/index.js";
import { captureOutput } from "../support/capture.js";
import { fc } from "../support/fast-check.js";
import { arbitraryPlan, buildRepresentativePlan } from "../support/plans.js";

/** Fences open with ```diff and close with ```, strictly alternating; <details> never nests. */
function expectWellFormed(markdown: string): void {
  const fences = markdown.split("\n").filter((line) => line.startsWith("```"));
  expect(fences.length % 2).toBe(0);
  expect(fences).toEqual(fences.map((_, index) => (index % 2 === 0 ? "```diff" : "```")));
  const tags = markdown.match(/<\/?details>/g) ?? [];
  expect(tags).toEqual(tags.map((_, index) => (index % 2 === 0 ? "<details>" : "</details>")));
  expect(tags.length % 2).toBe(0);
  expect((markdown.match(/<summary>/g) ?? []).length).toBe((markdown.match(/<\/summary>/g) ?? []).length);
  // Outside code blocks, only the renderer's own tags and the marker are raw HTML.
  const outside = markdown.split(/^```diff\n[\s\S]*?^```$/m).join("");
  expect(outside.replace(/<\/?(details|summary)>|<!-- pcsync-plan -->/g, "")).not.toMatch(/</);
}

function bigPlan(families: { project: string; changes: number }[]): Plan {
  const changes: PlannedChange[] = families.flatMap(({ project, changes: count }) =>
    Array.from({ length: count }, (_, index) => ({
      action: "update" as const,
      project,
      family: "plugin_configs" as const,
      name: `Config ${index} with a rather long name to take up room`,
      id: index + 1,
      fields: { enabled: { from: false, to: true }, description: { from: "old", to: `new ${index}` } },
      source: `pcsync.yaml:${index + 10}`,
    })),
  );
  return {
    format: "pcsync-plan",
    version: 2,
    summary: { create: 0, update: changes.length, delete: 0, reorder: 0 },
    changes,
    reorders: [],
    families: [],
    fingerprints: {},
    guards: [],
  };
}

describe("renderMarkdown", () => {
  it("starts with the sticky-comment marker, then title, summary, guards and a table with a total row", () => {
    const markdown = renderMarkdown(buildRepresentativePlan(), { title: "Plan for main" });
    const lines = markdown.split("\n");
    expect(lines[0]).toBe(PLAN_COMMENT_MARKER);
    expect(lines).toContain("### Plan for main");
    expect(lines).toContain("**Plan: 1 to create, 2 to update, 3 to delete, 2 to reorder.**");
    expect(lines).toContain("> [!WARNING]");
    expect(lines).toContain("| 1 | plugin_configs | 1 | 2 | 1 | 2 |");
    expect(lines).toContain("| 2 | plugin_configs | 0 | 0 | 2 | 0 |");
    expect(lines).toContain("| **Total** | | **1** | **2** | **3** | **2** |");
    expectWellFormed(markdown);
  });

  it("collapses each family's changes in a diff block of +, ~, - and ↕ lines", () => {
    const markdown = renderMarkdown(buildRepresentativePlan());
    expect(markdown).toContain(
      "<details><summary>project 1 / plugin_configs: 1 to create, 2 to update, 1 to delete, 2 to reorder</summary>\n\n```diff\n" +
        '+ create "Filter"  # pcsync.yaml:12\n+     plugin: 2\n',
    );
    expect(markdown).toContain('~ update "GeoIP" (id 4)  # pcsync.yaml:8\n~     enabled: false → true\n');
    expect(markdown).toContain('- delete "A" (id 30)  # pcsync.yaml:3\n');
    expect(markdown).toContain('↕ reorder: "GeoIP" (id 4) 3 → 1  # pcsync.yaml:3\n');
    expect(markdown).toContain("<summary>project 1 / pipeline_frontend_apps_configs: 2 unmanaged</summary>");
    expect(markdown).not.toContain("not shown");
  });

  it("says there are no changes, without a table", () => {
    const plan: Plan = { ...bigPlan([]), families: [] };
    const markdown = renderMarkdown(plan);
    expect(markdown).toBe(
      `${PLAN_COMMENT_MARKER}\n\n### pcsync plan\n\n**No changes. The remote state matches the manifest.**\n`,
    );
  });

  it("escapes names: no table cell split, no fence closed, no tag opened, nobody mentioned", () => {
    const plan = bigPlan([{ project: "a|b <i>@team</i>", changes: 1 }]);
    const change = plan.changes[0] as PlannedChange;
    change.name = "```\n</details><b>x</b> | `tick` @org/team";
    change.fields = { name: { from: "<script>", to: "a|b" } };
    const markdown = renderMarkdown(plan, { title: "PR #12 <b>|</b> @all" });
    const row = markdown.split("\n").find((line) => line.startsWith("| a"));
    expect(row).toBe("| a&#124;b &#60;i&#62;@&#8203;team&#60;/i&#62; | plugin_configs | 0 | 1 | 0 | 0 |");
    expect(markdown).toContain("### PR #12 &#60;b&#62;&#124;&#60;/b&#62; @&#8203;all");
    expect(markdown).toContain(
      '~ update "\\u0060\\u0060\\u0060\\n\\u003c/details>\\u003cb>x\\u003c/b> | \\u0060tick\\u0060 @org/team" (id 1)',
    );
    expect(markdown).toContain('~     name: "\\u003cscript>" → "a|b"');
    expectWellFormed(markdown);
  });

  it("cuts long values in the diff, saying how long they were", () => {
    const plan = bigPlan([{ project: "1", changes: 1 }]);
    (plan.changes[0] as PlannedChange).fields = { description: { from: null, to: "word ".repeat(1_000) } };
    const markdown = renderMarkdown(plan);
    expect(markdown).toContain(`~     description: null → "${"word ".repeat(40)}…" (5000 chars)`);
  });

  it("shows small families whole and cuts the largest, with a note, to stay under the limit", () => {
    const plan = bigPlan([
      { project: "small", changes: 3 },
      { project: "huge", changes: 20_000 },
    ]);
    const markdown = renderMarkdown(plan);
    expect(markdown.length).toBeLessThan(60_000);
    expect(markdown.length).toBeGreaterThan(50_000);
    expectWellFormed(markdown);
    expect(markdown).toContain("| huge | plugin_configs | 0 | 20000 | 0 | 0 |");
    const small = markdown.slice(markdown.indexOf("project small"), markdown.indexOf("project huge /"));
    expect(small).toContain("Config 2 with");
    expect(small).not.toContain("not shown");
    expect(markdown).toMatch(
      /_… \d+ more changes are not shown; run `pcsync plan` locally for the full plan\._/,
    );
    const shown = (markdown.match(/^~ update/gm) ?? []).length;
    const hidden = Number(/_… (\d+) more changes/.exec(markdown)?.[1]);
    expect(shown + hidden).toBe(20_003);
  });

  it("leaves out whole families, counted in a final note, when there are too many to show", () => {
    const plan = bigPlan(Array.from({ length: 3_000 }, (_, index) => ({ project: `p${index}`, changes: 2 })));
    const markdown = renderMarkdown(plan, { maxChars: 30_000 });
    expect(markdown.length).toBeLessThan(30_000);
    expectWellFormed(markdown);
    expect(markdown).toMatch(/\| … \d+ more \| \| 0 \| \d+ \| 0 \| 0 \|/);
    expect(markdown).toContain("| **Total** | | **0** | **6000** | **0** | **0** |");
    const omitted = /_… (\d+) more projects\/families are not shown \((\d+) changes\)/.exec(markdown);
    expect(omitted).not.toBeNull();
    const shownFamilies = (markdown.match(/<details>/g) ?? []).length;
    expect(shownFamilies + Number(omitted?.[1])).toBe(3_000);
    expect(Number(omitted?.[2])).toBe(2 * Number(omitted?.[1]));
  });

  it("refuses a limit too small to hold any plan", () => {
    expect(() => renderMarkdown(buildRepresentativePlan(), { maxChars: 100 })).toThrow(RangeError);
  });

  it("stays under 60,000 characters and well-formed for any plan up to 20,000 changes", () => {
    fc.assert(
      fc.property(arbitraryPlan(20_000), (plan) => {
        const markdown = renderMarkdown(plan);
        expect(markdown.length).toBeLessThan(60_000);
        expect(markdown.startsWith(`${PLAN_COMMENT_MARKER}\n`)).toBe(true);
        expectWellFormed(markdown);
      }),
      // Each run renders a plan of up to 20,000 changes: a dozen cover the sizes in about 6 s.
      { numRuns: 12 },
    );
  }, 60_000);

  it("never throws, in any format", () => {
    fc.assert(
      fc.property(arbitraryPlan(300), fc.boolean(), (plan, colour) => {
        const { out, text } = captureOutput();
        renderText(plan, out, { colour });
        expect(text()).toContain(plan.changes.length > 0 ? "Plan: " : "");
        expect(JSON.parse(renderJson(plan))).toMatchObject({ summary: plan.summary });
        expectWellFormed(renderMarkdown(plan, { maxChars: 5_000 }));
      }),
      { numRuns: 150 },
    );
  });
});
