// Property: for random current states and random manifests, apply then plan is empty on both
// server profiles, and no record outside the manifest's prune scope is touched.

import { describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { applyPlan } from "../../src/apply/apply-plan.js";
import {
  type EmulatorData,
  exampleData,
  type StoredRecord,
  startEmulator,
} from "../../src/emulator/index.js";
import type { FamilyName } from "../../src/families.js";
import type { DesiredFamily, DesiredState } from "../../src/manifest/types.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { listsToPlan, readCurrentState } from "../../src/read/read-current-state.js";
import { desiredConfig, desiredFamily } from "../support/builders.js";
import { fc } from "../support/fast-check.js";

const KEY = "phx_property_test_key_0123456789";
const PC: FamilyName = "plugin_configs";
const FE: FamilyName = "pipeline_frontend_apps_configs";
const PC_NAMES = ["p0", "p1", "p2", "p3", "p4", "p5", "p6"];
const FE_NAMES = ["f0", "f1", "f2", "f3"];
const PC_PLUGINS = [1, 2, 3, 4, 5, 6, 7, 8];
const FE_PLUGINS = [40, 41, 42, 43];

// A name always maps to the same plugin: a config's plugin cannot change on posthog-2024.
const pluginFor = (family: FamilyName, name: string) => {
  const plugins = family === PC ? PC_PLUGINS : FE_PLUGINS;
  return plugins[Number(name.slice(1)) % plugins.length] as number;
};

interface RemoteSpec {
  name: string | null;
  enabled: boolean;
  order: number;
  description: string | null;
}

const remoteFamily = (names: string[]) =>
  fc.uniqueArray(
    fc.record({
      name: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...names) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      enabled: fc.boolean(),
      order: fc.integer({ min: 0, max: 12 }),
      description: fc.option(fc.constantFrom("d1", "d2"), { nil: null }),
    }),
    // Two records clash only by a name they share: any number of them may be unnamed.
    { maxLength: 6, comparator: (a, b) => a.name !== null && a.name === b.name },
  );

const desiredConfigs = (names: string[]) =>
  fc.uniqueArray(
    fc.record(
      {
        name: fc.constantFrom(...names),
        enabled: fc.boolean(),
        description: fc.option(fc.constantFrom("d1", "d3"), { nil: null }),
        match_action: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
        order: fc.integer({ min: 0, max: 12 }),
      },
      { requiredKeys: ["name", "order"] },
    ),
    { maxLength: 6, selector: (config) => config.name },
  );

const desiredFamilyArb = (names: string[]) =>
  fc.option(fc.record({ prune: fc.boolean(), explicitOrder: fc.boolean(), configs: desiredConfigs(names) }), {
    nil: undefined,
  });

const scenario = fc.record({
  remotePc: remoteFamily(PC_NAMES),
  remoteFe: remoteFamily(FE_NAMES),
  otherProject: remoteFamily(PC_NAMES),
  wantPc: desiredFamilyArb(PC_NAMES),
  wantFe: desiredFamilyArb(FE_NAMES),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function buildData(input: Scenario): EmulatorData {
  const data = exampleData();
  let id = 100;
  const stamp = "2024-06-01T00:00:00Z";
  const make = (project: number, family: FamilyName, spec: RemoteSpec, index: number): StoredRecord => ({
    id: id++,
    family,
    project,
    plugin: spec.name === null ? pluginFor(family, `x${index}`) : pluginFor(family, spec.name),
    enabled: spec.enabled,
    order: spec.order,
    name: spec.name,
    description: spec.description,
    deleted: false,
    match_action: null,
    config: "{}",
    error: null,
    delivery_rate_24h: null,
    created_at: stamp,
    updated_at: stamp,
  });
  data.records = [
    ...input.remotePc.map((spec, index) => make(1, PC, spec, index)),
    ...input.remoteFe.map((spec, index) => make(1, FE, spec, index)),
    ...input.otherProject.map((spec, index) => make(2, PC, spec, index)),
  ];
  data.nextIds = { record: id };
  data.keys = [{ key: KEY, scopes: null, projects: "*" }];
  return data;
}

function buildDesired(input: Scenario): DesiredState {
  const families: DesiredFamily[] = [];
  const add = (family: FamilyName, want: Scenario["wantPc"]) => {
    if (!want) return;
    const configs = want.configs.map((config, index) =>
      desiredConfig({
        name: config.name,
        plugin: pluginFor(family, config.name),
        order: want.explicitOrder ? config.order : index + 1,
        ...(config.enabled === undefined ? {} : { enabled: config.enabled }),
        ...(config.description === undefined ? {} : { description: config.description }),
        ...(config.match_action === undefined ? {} : { match_action: config.match_action }),
      }),
    );
    families.push(
      desiredFamily("1", family, configs, { prune: want.prune, explicitOrder: want.explicitOrder }),
    );
  };
  add(PC, input.wantPc);
  add(FE, input.wantFe);
  return { families };
}

/** The ids a run may touch: claimed records, and unclaimed ones of pruned families. */
function recordsOutsideScope(
  before: StoredRecord[],
  desired: DesiredState,
  claimedIds: Set<number>,
): StoredRecord[] {
  const pruned = new Set(desired.families.filter((family) => family.prune).map((family) => family.family));
  return before.filter((record) => {
    if (record.project !== 1) return true;
    if (claimedIds.has(record.id)) return false;
    return !pruned.has(record.family) && !(record.family === FE && pruned.has(PC));
  });
}

for (const profile of ["seed", "posthog-2024"] as const) {
  describe(`apply then plan converges (${profile})`, () => {
    it("leaves nothing to do and touches nothing outside the prune scope", async () => {
      let applied = 0;
      await fc.assert(
        fc.asyncProperty(scenario, async (input) => {
          const desired = buildDesired(input);
          const emulator = await startEmulator({ profile, data: buildData(input) });
          const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
          try {
            const before = emulator.snapshot().records;
            const refs = listsToPlan(desired);
            const current = await readCurrentState(client, refs, { concurrency: 4 });
            const first = computePlan(desired, current);
            if (!first.plan) return; // an ambiguous remote state: refused before any write
            if (first.plan.changes.length + first.plan.reorders.length > 0) applied += 1;
            const report = await applyPlan(client, first.plan, current, { concurrency: 4 });
            expect(report.outcomes.filter((outcome) => outcome.status !== "done")).toEqual([]);

            const again = computePlan(desired, await readCurrentState(client, refs, { concurrency: 4 }));
            expect(again.errors).toEqual([]);
            expect(again.plan?.changes).toEqual([]);
            expect(again.plan?.reorders).toEqual([]);

            const after = new Map(emulator.snapshot().records.map((record) => [record.id, record]));
            const claimed = new Set(
              first.plan.changes.flatMap((change) =>
                change.action === "update" && change.id !== null ? [change.id] : [],
              ),
            );
            for (const reorder of first.plan.reorders) for (const move of reorder.moves) claimed.add(move.id);
            for (const record of recordsOutsideScope(before, desired, claimed)) {
              expect(after.get(record.id)).toEqual(record);
            }
          } finally {
            await client.close();
            await emulator.close();
          }
        }),
        { numRuns: 40 },
      );
      // Guard against a generator that stopped producing work: most runs must change something.
      expect(applied).toBeGreaterThan(20);
    }, 60_000);
  });
}
