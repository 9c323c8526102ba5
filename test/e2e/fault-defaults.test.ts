// The README's fault guarantee at the CLI's real defaults, end to end: the built CLI applies each
// manifest in turn against an emulator answering 15% of requests with 503, 10% with 429 (the
// emulator's 1 s wait) and committing 5% of writes without answering them, on both profiles. Each
// apply converges with no duplicate, and ends well within one proof window (75 s at --timeout 30):
// none of these failures calls for one, so none may be waited for. Slow (real time): it runs in CI
// (CI=true) or with PCSYNC_SLOW_TESTS=1; the same soak at 1/100 time runs in every `npm test`
// (test/reliability/fault-soak.test.ts).

import { afterEach, describe, expect, it } from "vitest";
import { type FaultOptions, PROFILE_NAMES, startEmulator } from "../../src/emulator/index.js";
import { runBuiltCli } from "../support/cli.js";
import { KEY, loadDesired, MANIFESTS, reliabilityData } from "../support/scenario.js";
import { pickTestSeed } from "../support/seed.js";
import { differencesFromManifest, duplicateRecords, touchedOutsideScope } from "../support/state-checks.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const SLOW = process.env.CI === "true" || process.env.PCSYNC_SLOW_TESTS === "1";
/** One proof window at the defaults: 2.5 × the 30 s request timeout. */
const PROOF_WINDOW_MS = 75_000;

const readmeFaults = (seed: number): FaultOptions => ({
  fail503Rate: 0.15,
  fail429Rate: 0.1,
  dropWriteRate: 0.05,
  seed,
});

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.runIf(SLOW).each(PROFILE_NAMES)("one apply at the CLI's defaults under faults (%s)", (profile) => {
  it(
    "converges each time, with no duplicate, in seconds rather than windows",
    async () => {
      const seed = pickTestSeed();
      const emulator = await startEmulator({ profile, data: reliabilityData() });
      const directory = await temporaryDirectory();
      cleanup.push(
        () => emulator.close(),
        () => directory.remove(),
      );
      const times: number[] = [];
      for (const [round, text] of MANIFESTS.entries()) {
        const context = `${profile} manifest ${round + 1} (seed ${seed + round})`;
        const desired = loadDesired(text);
        const manifest = await writeManifest(directory.path, text);
        const before = emulator.snapshot();
        emulator.setFaults(readmeFaults(seed + round));
        const started = Date.now();
        const run = await runBuiltCli(
          ["apply", "--auto-approve", "-f", manifest, "--base-url", emulator.url],
          {
            env: { PCSYNC_API_KEY: KEY },
            cwd: directory.path,
            timeoutMs: 2 * PROOF_WINDOW_MS,
          },
        );
        times.push(Date.now() - started);
        emulator.setFaults({});
        expect(run.code, `${context}\n${run.stdout}${run.stderr}`).toBe(0);
        expect(run.stdout, context).toMatch(/Apply complete: /);
        const after = emulator.snapshot();
        expect(duplicateRecords(after), context).toEqual([]);
        expect(differencesFromManifest(after, desired), context).toEqual([]);
        expect(touchedOutsideScope(before, after, desired), context).toEqual([]);
        expect(times.at(-1), context).toBeLessThan(PROOF_WINDOW_MS);
      }
      process.stderr.write(
        `fault-defaults (${profile}): apply times ${times.map((ms) => `${ms} ms`).join(", ")}\n`,
      );
    },
    6 * PROOF_WINDOW_MS,
  );
});
