// A plan read at a glance: a create says what the service gives the fields the manifest leaves
// out, and colour goes with --no-color on any command.

import { describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/compute-plan.js";
import { renderText } from "../../src/render/text.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";
import { captureStreams } from "../support/capture.js";
import { PC } from "../support/families.js";

function planOf(fields: Record<string, unknown>) {
  const { plan } = computePlan(
    {
      families: [desiredFamily("1", PC, [desiredConfig({ name: "New", plugin: 1, ...fields }, { line: 5 })])],
    },
    { families: [{ project: "1", family: PC, records: [] }] },
  );
  if (!plan) throw new Error("no plan");
  const streams = captureStreams();
  renderText(plan, streams.stdout, { colour: false });
  return streams.text().stdout;
}

describe("creates in the text plan", () => {
  it("show enabled: false (default) when the manifest leaves enabled out", () => {
    expect(planOf({})).toContain('  + create "New"');
    expect(planOf({})).toContain("      enabled: false (default)\n");
  });

  it("show the manifest's value, and no default, when it gives one", () => {
    const text = planOf({ enabled: true });
    expect(text).toContain("      enabled: true\n");
    expect(text).not.toContain("(default)");
  });
});
