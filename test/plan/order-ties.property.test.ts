// Property: no plan that applies leaves a config of the manifest and a record it does not manage at
// one order without a warning naming both, nor two configs at one order where ignore_fields: [order]
// left one of them off the manifest's order (the manifest's checks cannot see that tie), and it
// warns of no other order. Applying is simulated on the lists, with plugin_configs also listing
// the frontend apps (posthog-2024) or not (seed).

import { describe, expect, it } from "vitest";
import type { FamilyName } from "../../src/families.js";
import type { DesiredFamily } from "../../src/manifest/types.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { Plan } from "../../src/plan/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { FE, PC } from "../support/families.js";
import { fc } from "../support/fast-check.js";

const NAMES: Record<FamilyName, string[]> = {
  plugin_configs: ["p0", "p1", "p2", "p3", "p4"],
  pipeline_frontend_apps_configs: ["f0", "f1", "f2"],
};

const records = (family: FamilyName, firstId: number) =>
  fc
    .uniqueArray(
      fc.record({
        name: fc.option(fc.constantFrom(...NAMES[family]), { nil: null }),
        order: fc.integer({ min: 1, max: 5 }),
      }),
      { maxLength: 5, comparator: (a, b) => a.name !== null && a.name === b.name },
    )
    .map((specs) => specs.map((spec, index) => remoteRecord({ id: firstId + index, plugin: 1, ...spec })));

const desired = (family: FamilyName) =>
  fc.record({
    names: fc.uniqueArray(fc.constantFrom(...NAMES[family]), { maxLength: 4 }),
    explicit: fc.option(fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 4, maxLength: 4 }), {
      nil: undefined,
    }),
    prune: fc.boolean(),
    keepsOrder: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  });

function toFamily(
  family: FamilyName,
  spec: { names: string[]; explicit: number[] | undefined; prune: boolean; keepsOrder: boolean[] },
): DesiredFamily {
  const configs = spec.names.map((name, index) =>
    desiredConfig({
      name,
      plugin: 1,
      order: spec.explicit?.[index] ?? index + 1,
      ...(spec.keepsOrder[index] === true ? { ignore_fields: ["order" as const] } : {}),
    }),
  );
  return desiredFamily("1", family, configs, {
    prune: spec.prune,
    explicitOrder: spec.explicit !== undefined,
  });
}

/** The family's own records once `plan` is applied: deletes gone, moves and creates at their order. */
function applied(plan: Plan, family: FamilyName, own: readonly PluginConfigRecord[]): PluginConfigRecord[] {
  const deleted = new Set(
    plan.changes.filter((c) => c.family === family && c.action === "delete").map((c) => c.id),
  );
  const moves = new Map(
    plan.reorders
      .filter((r) => r.family === family)
      .flatMap((r) => r.moves.map((move) => [move.id, move.to])),
  );
  const after = own
    .filter((record) => !deleted.has(record.id))
    .map((record) => ({ ...record, order: moves.get(record.id) ?? record.order }));
  let nextId = 1000;
  for (const change of plan.changes) {
    if (change.family !== family || change.action !== "create") continue;
    const order = change.fields.order?.to;
    after.push(
      remoteRecord({ id: nextId++, name: change.name, order: typeof order === "number" ? order : -1 }),
    );
  }
  return after;
}

describe("order ties (property)", () => {
  it("every order a config shares with an unmanaged record after apply is warned of, and no other", () => {
    let checked = 0;
    fc.assert(
      fc.property(
        records(PC, 1),
        records(FE, 100),
        fc.boolean(),
        desired(PC),
        fc.option(desired(FE), { nil: undefined }),
        (pcOwn, feOwn, overlapping, pcSpec, feSpec) => {
          const families = [toFamily(PC, pcSpec), ...(feSpec ? [toFamily(FE, feSpec)] : [])];
          const { plan } = computePlan(
            { families },
            {
              families: [
                { project: "1", family: PC, records: overlapping ? [...pcOwn, ...feOwn] : pcOwn },
                { project: "1", family: FE, records: feOwn },
              ],
            },
          );
          if (!plan) return;
          checked += 1;
          for (const family of families) {
            const after = applied(plan, family.family, family.family === PC ? pcOwn : feOwn);
            const manifestOrder = new Map(
              family.configs.map((config) => [config.fields.name, config.fields.order]),
            );
            const expected = new Map<number, { managed: string[]; unmanaged: number[] }>();
            for (const order of new Set(after.map((record) => record.order))) {
              const at = after.filter((record) => record.order === order);
              const managed = at.filter((record) => record.name !== null && manifestOrder.has(record.name));
              const unmanaged = at.filter((record) => !managed.includes(record));
              const offManifest = managed.some((record) => manifestOrder.get(record.name ?? "") !== order);
              if (managed.length > 0 && (unmanaged.length > 0 || (managed.length > 1 && offManifest))) {
                expected.set(order, {
                  managed: managed.map((record) => record.name ?? "").sort(),
                  unmanaged: unmanaged.map((record) => record.id).sort((a, b) => a - b),
                });
              }
            }
            const report = plan.families.find((item) => item.family === family.family);
            const warned = new Map(
              (report?.orderTies ?? []).map((tie) => [
                tie.order,
                {
                  managed: tie.managed.map((config) => config.name).sort(),
                  unmanaged: tie.unmanaged.map((record) => record.id).sort((a, b) => a - b),
                },
              ]),
            );
            expect(warned).toEqual(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
    expect(checked).toBeGreaterThan(100);
  });
});
