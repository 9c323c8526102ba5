// Fault soak: 20 applies alternating between manifests against an emulator that answers 15% of
// requests with 503, 10% with 429 and drops 5% of writes after committing them, on both profiles;
// then every kind of failed write at once (a 503 with Retry-After, a 500 after commit, a proxy's
// 502/504 page). After every round the state is the manifest's, nothing is duplicated, nothing
// outside the prune scope changed, a fresh plan is empty, and the summary counts what the server
// holds. Time runs at 1/100 for the client and the emulator's stated waits alike (one factor, so
// windows, backoffs, timeouts and pauses keep the defaults' proportions): the same run at the
// CLI's real defaults is test/e2e/fault-defaults.test.ts.

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
/** Every duration of the client, and every wait the emulator states, at this share of its default. */
const TIME_SCALE = 0.01;

/** The README's guarantee: 15% 503, 10% 429 (the emulator's 1 s wait), 5% writes committed but unanswered. */
const readmeFaults = (seed: number): FaultOptions => ({
  fail503Rate: 0.15,
  fail429Rate: 0.1,
  fail429WaitSeconds: 1 * TIME_SCALE,
  dropWriteRate: 0.05,
  seed,
});

/** Each kind of failed write a client must tell apart, on top of the README's faults. */
const everyKind = (seed: number): FaultOptions => ({
  ...readmeFaults(seed),
  fail503RetryAfterSeconds: 2 * TIME_SCALE,
  commitThen500Rate: 0.05,
  proxyErrorRate: 0.05,
});

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function soak(profile: (typeof PROFILE_NAMES)[number], rounds: number, faultsFor: typeof readmeFaults) {
  const baseSeed = pickTestSeed();
  const emulator: RunningEmulator = await startEmulator({ profile, data: reliabilityData() });
  // The CLI's defaults (retries, backoffs, timeouts, rate limiter), all scaled by one factor.
  const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY, timeScale: TIME_SCALE });
  cleanup.push(
    () => client.close(),
    () => emulator.close(),
  );
  const desiredStates = MANIFESTS.map(loadDesired);
  let faultsSeen = 0;

  for (let round = 0; round < rounds; round += 1) {
    const desired = desiredStates[round % desiredStates.length];
    if (!desired) throw new Error("no manifest");
    const context = `${profile} round ${round + 1} (seed ${baseSeed + round})`;
    const before = emulator.snapshot();
    emulator.resetRequestLog();
    emulator.setFaults(faultsFor(baseSeed + round));

    // A create whose POSTs all went unanswered (a proxy's 502/504) CREATE_POSTS times is reported
    // failed once a re-read after each proof window showed it absent: the cap the create rule
    // names, met by 1 create in 8,000 at a 5% proxy error rate, and more often by a seed whose draws
    // line up with a create's POSTs (seed 41538021). Such a failure must be true (the server does
    // not hold the record), and the next apply must make it.
    for (let apply = 1; ; apply += 1) {
      const { plan, report } = await applyOnce(client, desired);
      faultsSeen += emulator.requestLog.filter((entry) =>
        [0, 429, 500, 502, 503, 504].includes(entry.status),
      ).length;
      emulator.resetRequestLog();
      const notDone = report.outcomes.filter((outcome) => outcome.status !== "done");
      const failed = notDone.filter((outcome) => outcome.action === "create");
      for (const outcome of notDone) {
        // A family's rearrange waits for all its records: it is skipped where a create of it failed
        // (seed 1978696291), and made by the next apply with the create.
        if (outcome.action === "reorder") {
          expect(outcome.status, context).toBe("skipped");
          expect(
            failed.some((create) => create.project === outcome.project && create.family === outcome.family),
            `${context}: a rearrange skipped without a failed create in its family`,
          ).toBe(true);
          continue;
        }
        expect(outcome, context).toMatchObject({ action: "create", status: "failed" });
        expect(outcome.message, context).toMatch(/since 3 of them went unanswered/);
        const held = emulator
          .snapshot()
          .records.filter(
            (record) =>
              !record.deleted &&
              String(record.project) === outcome.project &&
              record.family === outcome.family &&
              record.name === outcome.name,
          );
        expect(held, `${context}: a create reported failed is not on the server`).toEqual([]);
      }
      // Every create the plan had is counted created (adopted ones, answered 500 or dropped, too), or failed as above.
      const creates = plan.changes.filter((change) => change.action === "create").length;
      expect(
        report.outcomes.filter((outcome) => outcome.action === "create" && outcome.status === "done"),
        context,
      ).toHaveLength(creates - failed.length);
      if (notDone.length === 0) break;
      expect(apply, `${context}: applies that met a create's cap`).toBeLessThan(3);
    }

    // Check with the faults off: the checks must see the state, not more faults.
    emulator.setFaults({});
    const after = emulator.snapshot();
    expect(duplicateRecords(after), context).toEqual([]);
    expect(differencesFromManifest(after, desired), context).toEqual([]);
    expect(touchedOutsideScope(before, after, desired), context).toEqual([]);
    expect(await pendingChanges(client, desired), context).toEqual([]);
  }
  // The soak is only worth something if the faults happened: at the rates the guarantees name, a
  // round meets three on average, so at least one a round holds for every seed (seed 41538021 met
  // exactly 60 in 20 rounds, which a bar of "more than 3 a round" refused).
  expect(faultsSeen).toBeGreaterThanOrEqual(rounds);
}

describe.each(PROFILE_NAMES)("fault soak (%s)", (profile) => {
  it(`converges after each of ${ROUNDS} rounds under 503s, 429s and dropped writes`, async () => {
    await soak(profile, ROUNDS, readmeFaults);
  }, 60_000);

  it("converges under every kind of failed write at once, counting what the server holds", async () => {
    await soak(profile, 8, everyKind);
  }, 60_000);
});
