// The logs gate's rule on a project's counts: the ERROR share against max_error_ratio, and too few
// entries as unknown, which fails unless allowed.

import { describe, expect, it } from "vitest";
import { judgeCounts } from "../../src/rollout/log-health.js";

const spec = { maxErrorRatio: 0.05, minEntries: 20, allowUnknown: false };

describe("the logs gate", () => {
  it.each([
    [{ entries: 100, errors: 5 }, spec, "pass", true],
    [{ entries: 100, errors: 6 }, spec, "fail", false],
    [{ entries: 19, errors: 0 }, spec, "unknown", false],
    [{ entries: 19, errors: 19 }, { ...spec, allowUnknown: true }, "unknown", true],
    [{ entries: 0, errors: 0 }, { ...spec, minEntries: 0 }, "pass", true],
    [{ entries: 20, errors: 20 }, { ...spec, maxErrorRatio: 1 }, "pass", true],
  ] as const)("%o under %o is %s", (counts, rule, status, passed) => {
    const verdict = judgeCounts("1", 2, counts, rule);
    expect(verdict).toMatchObject({ project: "1", status, passed });
    expect(verdict.summary).toContain(`${counts.errors} ERROR of ${counts.entries} entries`);
  });
});
