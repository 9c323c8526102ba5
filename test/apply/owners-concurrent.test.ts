// Two owners whose manifests both create a config of one name, applied at the same moment: the end
// is what one after the other would give. The check after creates (dedupe-creates.ts) keeps the
// lowest id, its owner's; the other run deletes its own record (never the other owner's, never
// writing it) and reports the create lost to that owner, which `apply` refuses with exit 3. Then
// the winner's plan is clean and the other's is refused for another owner's record, as it would
// have been had it come second.

import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { applyPlan } from "../../src/apply/apply-plan.js";
import { exampleData, startEmulator } from "../../src/emulator/index.js";
import type { DesiredState } from "../../src/manifest/types.js";
import { readMark } from "../../src/owner-mark.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { sameName } from "../../src/record-name.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";

const KEY = "phx_owner_concurrent_key_0123456789";

// Each owner's spelling of the name: the same, or look-alikes the identity rule takes for one name
// (NFC against NFD), as the planner does.
const SPELLINGS = {
  "one spelling": { "team-a": "Shared name", "team-b": "Shared name" },
  "look-alike spellings": { "team-a": "Se\u00f1al", "team-b": "Sen\u0303al" },
} as const;

const want = (owner: "team-a" | "team-b", spelling: keyof typeof SPELLINGS): DesiredState => ({
  families: [
    desiredFamily("1", "plugin_configs", [
      desiredConfig({ name: SPELLINGS[spelling][owner], plugin: 2, order: 9, description: `${owner}'s` }),
    ]),
  ],
  owner: { name: owner, source: { file: "pcsync.yaml", line: 2, col: 8 } },
});

describe.each(
  (["seed", "posthog-2024"] as const).flatMap((profile) =>
    (Object.keys(SPELLINGS) as (keyof typeof SPELLINGS)[]).map((spelling) => [profile, spelling] as const),
  ),
)("two owners create one name at once (%s, %s)", (profile, spelling) => {
  it("ends as one after the other would: one record, the lower id's owner's; the other run lost it", async () => {
    const data = exampleData();
    data.keys = [{ key: KEY, scopes: null, projects: "*" }];
    const emulator = await startEmulator({ profile, data });
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    try {
      const owners = ["team-a", "team-b"] as const;
      const planned = await Promise.all(
        owners.map(async (owner) => {
          const current = await readCurrentState(client, listsToPlan(want(owner, spelling)), {
            concurrency: 2,
          });
          return { plan: computePlan(want(owner, spelling), current).plan, current };
        }),
      );
      const reports = await Promise.all(
        planned.map(({ plan, current }) => {
          if (plan === undefined) throw new Error("no plan");
          return applyPlan(client, plan, current, { concurrency: 2 });
        }),
      );
      const statuses = reports.map((report) => report.outcomes.map((outcome) => outcome.status).join());
      expect(statuses.sort()).toEqual(["done", "failed"]);
      const winnerIndex = statuses.indexOf("done");
      const winner = owners[winnerIndex] as (typeof owners)[number];
      const loser = owners[1 - winnerIndex] as (typeof owners)[number];
      const lost = reports[1 - winnerIndex]?.outcomes[0];
      expect(lost?.ownerLost).toEqual({ winner });
      expect(lost?.message).toMatch(
        new RegExp(
          `owner "${winner}" created it at the same time \\(id \\d+, the lower id, which stays theirs\\); this run's copy \\(id \\d+\\) was deleted`,
        ),
      );
      const live = emulator
        .snapshot()
        .records.filter((record) => sameName(record.name, SPELLINGS[spelling]["team-a"]) && !record.deleted);
      expect(live.map((record) => readMark(record.description))).toEqual([
        { owner: winner, text: `${winner}'s` },
      ]);
      const winnerPlan = computePlan(
        want(winner, spelling),
        await readCurrentState(client, listsToPlan(want(winner, spelling)), { concurrency: 2 }),
      );
      expect(winnerPlan.errors).toEqual([]);
      expect(winnerPlan.plan?.changes).toEqual([]);
      const loserPlan = computePlan(
        want(loser, spelling),
        await readCurrentState(client, listsToPlan(want(loser, spelling)), { concurrency: 2 }),
      );
      expect(loserPlan.errors).toEqual([
        expect.objectContaining({
          refused: true,
          message: expect.stringContaining(`which owner "${winner}" manages`),
        }),
      ]);
    } finally {
      await client.close();
      await emulator.close();
    }
  });
});
