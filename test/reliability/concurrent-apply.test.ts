// Two applies of the same manifest at once (two CI jobs racing) both plan the same creates and both
// make them; each run's check after its creates (src/apply/dedupe-creates.ts) leaves exactly one
// record per config, the lower id, whatever the interleaving and on both profiles.

import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { createRandom } from "../../src/emulator/faults.js";
import { type FaultOptions, PROFILE_NAMES, startEmulator } from "../../src/emulator/index.js";
import { applyOnce, pendingChanges } from "../support/apply-in-process.js";
import { KEY, loadDesired, MANIFEST_A, reliabilityData } from "../support/scenario.js";
import { pickTestSeed } from "../support/seed.js";
import { differencesFromManifest, duplicateRecords, touchedOutsideScope } from "../support/state-checks.js";

const RACE_MESSAGE = /a concurrent run created this record too \(id \d+, which is kept as the lower id\)/;

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function raceTwoApplies(profile: (typeof PROFILE_NAMES)[number], faults: FaultOptions, seed: number) {
  const random = createRandom(seed);
  // Latency longer than the start offsets: both runs read before either creates, so both create.
  const emulator = await startEmulator({
    profile,
    data: reliabilityData(),
    faults: { latencyMs: 20, ...faults },
  });
  const clients = [0, 1].map(
    () =>
      new ApiClient({
        baseUrl: emulator.url,
        apiKey: KEY,
        concurrency: 3,
        retry: { retries: 8, baseDelayMs: 1, maxDelayMs: 20 },
      }),
  );
  cleanup.push(...clients.map((client) => () => client.close()), () => emulator.close());
  const desired = loadDesired(MANIFEST_A);
  const before = emulator.snapshot();

  const runs = await Promise.all(
    clients.map(async (client) => {
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 10)));
      return applyOnce(client, desired);
    }),
  );

  emulator.setFaults({});
  const after = emulator.snapshot();
  const context = `${profile}, seed ${seed}`;
  for (const { report } of runs) {
    expect(
      report.outcomes.filter((outcome) => outcome.status !== "done"),
      context,
    ).toEqual([]);
  }
  expect(duplicateRecords(after), context).toEqual([]);
  expect(differencesFromManifest(after, desired), context).toEqual([]);
  expect(touchedOutsideScope(before, after, desired), context).toEqual([]);
  expect(await pendingChanges(clients[0] as ApiClient, desired), context).toEqual([]);
  return runs;
}

describe.each(PROFILE_NAMES)("two applies of one manifest at once (%s)", (profile) => {
  it("end with one record per config: the run holding the higher id deletes its copy", async () => {
    for (let trial = 0; trial < 3; trial += 1) {
      const seed = pickTestSeed();
      const runs = await raceTwoApplies(profile, {}, seed);
      const creates = runs.map(({ plan }) => plan.summary.create);
      // Both runs planned (and made) every create: the race really happened.
      expect(creates[0]).toBeGreaterThan(0);
      expect(creates[1]).toBe(creates[0]);
      const yielded = runs.flatMap(({ report }) =>
        report.outcomes.filter((outcome) => RACE_MESSAGE.test(outcome.message ?? "")),
      );
      // Exactly one of the two runs gave way for each config.
      expect(yielded).toHaveLength(creates[0] ?? 0);
      const byRun = runs.map(({ report }) =>
        report.outcomes.filter((outcome) => outcome.action === "create").map((outcome) => outcome.id),
      );
      // And both reports name the survivor.
      expect(byRun[0]).toEqual(byRun[1]);
    }
  }, 30_000);

  it("also when writes are dropped after committing, so a run may adopt the other's record", async () => {
    for (let trial = 0; trial < 2; trial += 1) {
      const seed = pickTestSeed();
      await raceTwoApplies(profile, { dropWriteRate: 0.3, seed }, seed);
    }
  }, 30_000);
});
