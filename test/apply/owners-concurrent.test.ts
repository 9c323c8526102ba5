// Two owners whose manifests both create a config of one name, applied at the same moment: the
// check after creates (dedupe-creates.ts) must not take the other owner's record for a copy of its
// own, delete its own and overwrite theirs. Each keeps its record, and each plan is then clean.

import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { applyPlan } from "../../src/apply/apply-plan.js";
import { exampleData, startEmulator } from "../../src/emulator/index.js";
import type { DesiredState } from "../../src/manifest/types.js";
import { readMark } from "../../src/owner-mark.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";

const KEY = "phx_owner_concurrent_key_0123456789";

const want = (owner: string): DesiredState => ({
  families: [
    desiredFamily("1", "plugin_configs", [
      desiredConfig({ name: "Shared name", plugin: 2, order: 9, description: `${owner}'s` }),
    ]),
  ],
  owner: { name: owner, source: { file: "pcsync.yaml", line: 2, col: 8 } },
});

describe.each(["seed", "posthog-2024"] as const)("two owners create one name at once (%s)", (profile) => {
  it("keeps both records, each with its owner's mark and text", async () => {
    const data = exampleData();
    data.keys = [{ key: KEY, scopes: null, projects: "*" }];
    const emulator = await startEmulator({ profile, data });
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    try {
      const owners = ["team-a", "team-b"];
      const planned = await Promise.all(
        owners.map(async (owner) => {
          const current = await readCurrentState(client, listsToPlan(want(owner)), { concurrency: 2 });
          return { plan: computePlan(want(owner), current).plan, current };
        }),
      );
      const reports = await Promise.all(
        planned.map(({ plan, current }) => {
          if (plan === undefined) throw new Error("no plan");
          return applyPlan(client, plan, current, { concurrency: 2 });
        }),
      );
      for (const report of reports)
        expect(report.outcomes.map((outcome) => outcome.status)).toEqual(["done"]);
      const named = emulator
        .snapshot()
        .records.filter((record) => record.name === "Shared name" && !record.deleted)
        .map((record) => readMark(record.description));
      expect(named.sort((a, b) => String(a.owner).localeCompare(String(b.owner)))).toEqual([
        { owner: "team-a", text: "team-a's" },
        { owner: "team-b", text: "team-b's" },
      ]);
      for (const owner of owners) {
        const current = await readCurrentState(client, listsToPlan(want(owner)), { concurrency: 2 });
        const again = computePlan(want(owner), current);
        expect(again.errors).toEqual([]);
        expect(again.plan?.changes).toEqual([]);
      }
    } finally {
      await client.close();
      await emulator.close();
    }
  });
});
