// Fault soak: 20 applies alternating between manifests against an emulator that answers 15% of
// requests with 503, 10% with 429 and drops 5% of writes after committing them, on both profiles.
// After every round the state is the manifest's, nothing is duplicated, nothing outside the prune
// scope changed, and a fresh plan is empty.

import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import {
  type FaultOptions,
  PROFILE_NAMES,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import { applyOnce, pendingChanges } from "../support/apply-in-process.js";
import { KEY, loadDesired, MANIFESTS, reliabilityData } from "../support/scenario.js";
import { pickTestSeed } from "../support/seed.js";
import { differencesFromManifest, duplicateRecords, touchedOutsideScope } from "../support/state-checks.js";

const ROUNDS = 20;

const faultsFor = (seed: number): FaultOptions => ({
  fail503Rate: 0.15,
  fail429Rate: 0.1,
  dropWriteRate: 0.05,
  // The injected 429s are random, not load: announcing no wait keeps the soak fast.
  fail429WaitSeconds: 0,
  seed,
});

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.each(PROFILE_NAMES)("fault soak (%s)", (profile) => {
  it(`converges after each of ${ROUNDS} rounds under 503s, 429s and dropped writes`, async () => {
    const baseSeed = pickTestSeed();
    const emulator: RunningEmulator = await startEmulator({ profile, data: reliabilityData() });
    // Retries are cheap here and plentiful, so that every round finishes despite a 30% fault rate;
    // the throttling is random, so the client is told not to slow down for it.
    const client = new ApiClient({
      baseUrl: emulator.url,
      apiKey: KEY,
      concurrency: 4,
      retry: { retries: 12, baseDelayMs: 1, maxDelayMs: 20 },
      rateLimit: { decreaseFactor: 1 },
    });
    cleanup.push(
      () => client.close(),
      () => emulator.close(),
    );
    const desiredStates = MANIFESTS.map(loadDesired);
    let faultsSeen = 0;

    for (let round = 0; round < ROUNDS; round += 1) {
      const desired = desiredStates[round % desiredStates.length];
      if (!desired) throw new Error("no manifest");
      const context = `${profile} round ${round + 1} (seed ${baseSeed + round})`;
      const before = emulator.snapshot();
      emulator.resetRequestLog();
      emulator.setFaults(faultsFor(baseSeed + round));

      // The emulator never processes a request it fails with 503, and commits a dropped write before
      // dropping it: nothing it does lands late, so a short settle window loses no guarantee here.
      const { report } = await applyOnce(client, desired, { settleWindowMs: 50 });
      faultsSeen += emulator.requestLog.filter((entry) => [0, 429, 503].includes(entry.status)).length;
      expect(
        report.outcomes.filter((outcome) => outcome.status !== "done"),
        context,
      ).toEqual([]);

      // Check with the faults off: the checks must see the state, not more faults.
      emulator.setFaults({});
      const after = emulator.snapshot();
      expect(duplicateRecords(after), context).toEqual([]);
      expect(differencesFromManifest(after, desired), context).toEqual([]);
      expect(touchedOutsideScope(before, after, desired), context).toEqual([]);
      expect(await pendingChanges(client, desired), context).toEqual([]);
    }
    // The soak is only worth something if the faults happened.
    expect(faultsSeen).toBeGreaterThan(ROUNDS * 3);
  }, 40_000);
});
