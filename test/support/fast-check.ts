// fast-check for this project's property tests: every property of a test file runs from one seed
// (PCSYNC_TEST_SEED, or one picked per file), and a failing property says how to replay it.
// Import `fc` from here rather than from "fast-check".

import fc from "fast-check";
import { expect } from "vitest";
import { chooseSeed, describeReplay } from "./seed.js";

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: chooseSeed() });
fc.installGlobalPlugin(() => ({
  onAllRunsComplete(details) {
    if (!details.failed) return;
    const report = fc.defaultReportMessage(details) ?? "Property failed";
    const replay = describeReplay(details.seed, expect.getState().testPath ?? "");
    throw new Error(`${report}\n\n${replay}`, { cause: details.errorInstance });
  },
}));

export { fc };
