// Joining the parts of a plan at any number of projects: nothing spreads one argument per part.

import { describe, expect, it } from "vitest";
import { assemblePlan, type ProjectPlan } from "../../src/plan/compute-plan.js";

const NONE: never[] = [];
const NO_FINGERPRINTS = {};

/** A project's part; one in a thousand carries a fingerprint (cheap to build 200,000 of). */
function part(index: number): ProjectPlan {
  const fingerprints =
    index % 1000 === 999 ? { [`${index}/plugin_configs`]: `fp-${index}` } : NO_FINGERPRINTS;
  return {
    project: String(index),
    changes: NONE,
    reorders: NONE,
    families: NONE,
    fingerprints,
    guards: NONE,
    errors: NONE,
  };
}

describe("a plan of many projects", () => {
  it("joins 200,000 projects' parts (beyond any call's argument limit), keeping every fingerprint", () => {
    const parts = Array.from({ length: 200_000 }, (_, index) => part(index));
    const { plan } = assemblePlan(parts);
    const fingerprints = Object.keys(plan?.fingerprints ?? {});
    expect(fingerprints).toHaveLength(200);
    expect(plan?.fingerprints["199999/plugin_configs"]).toBe("fp-199999");
  });
});
