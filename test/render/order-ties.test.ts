// The order-tie warnings in text and markdown: hostile names stay inert, and however many ties a
// plan holds, the markdown comment keeps its size limit.

import { describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/compute-plan.js";
import { renderMarkdown } from "../../src/render/index.js";
import { renderText } from "../../src/render/text.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { captureStreams } from "../support/capture.js";
import { PC } from "../support/families.js";

const HOSTILE = "`</details>` @team <b>x</b>";

/** `count` configs, each created at the order of an unmanaged record with a hostile name. */
function planWithTies(count: number) {
  const configs = Array.from({ length: count }, (_, index) =>
    desiredConfig({ name: `${HOSTILE} ${index}`, plugin: 1, order: index + 1 }, { line: index + 5 }),
  );
  const records = Array.from({ length: count }, (_, index) =>
    remoteRecord({ id: 1000 + index, name: `${HOSTILE} hand ${index}`, plugin: 2, order: index + 1 }),
  );
  const { plan } = computePlan(
    { families: [desiredFamily("1", PC, configs)] },
    { families: [{ project: "1", family: PC, records }] },
  );
  if (!plan) throw new Error("no plan");
  return plan;
}

describe("order ties in text and markdown", () => {
  it("markdown: a warning block that cuts to fit, within the size limit, with names made inert", () => {
    const markdown = renderMarkdown(planWithTies(2_000), { maxChars: 20_000 });
    expect(markdown.length).toBeLessThan(20_000);
    expect(markdown).toMatch(
      /> \[!WARNING\]\n> 2000 order ties with records the manifest does not manage; apply is not refused\.\n/,
    );
    expect(markdown).toMatch(/> - … and \d+ more\n/);
    expect(markdown).not.toContain("</details>`");
    // Outside the diff blocks a name mentions nobody (inside a code block it cannot).
    expect(markdown.slice(0, markdown.indexOf("<details>"))).not.toContain("@team");
  });

  it("text: without --verbose, one warning of two lines for every tie; with it, one line per tie", () => {
    const terse = captureStreams();
    renderText(planWithTies(3), terse.stdout, { colour: false });
    const { stdout } = terse.text();
    expect(stdout).not.toContain("! order tie");
    expect(stdout).toMatch(
      /Plan: 3 to create, 0 to update, 0 to delete, 0 to reorder\.\nWarning: 3 order ties with records the manifest does not manage: which of them runs first is not defined \(the service lists them by plugin id\)\.\n {2}Run with --verbose for each tie and how to settle it\.\n$/,
    );

    const verbose = captureStreams();
    renderText(planWithTies(3), verbose.stdout, { colour: false, verbose: true });
    const detailed = verbose.text().stdout;
    expect(detailed.match(/^ {2}! order tie: /gm)).toHaveLength(3);
    expect(detailed).toMatch(
      /\nWarning: 3 order ties with records the manifest does not manage above \(marked "! order tie"\)\.\n$/,
    );
  });
});
