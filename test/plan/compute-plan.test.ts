import { describe, expect, it } from "vitest";
import { findPlanProblems } from "../../src/apply/check-saved-plan.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";

const PC = "plugin_configs" as const;
const FE = "pipeline_frontend_apps_configs" as const;

describe("computePlan", () => {
  it("creates what is missing with plugin and order, and updates only the fields that differ", () => {
    const { plan, errors } = computePlan(
      {
        families: [
          desiredFamily("1", PC, [
            desiredConfig({ name: "GeoIP", plugin: 1, order: 1, enabled: true }),
            desiredConfig({ name: "Filter", plugin: 2, order: 2, description: "new" }),
          ]),
        ],
      },
      {
        families: [
          {
            project: "1",
            family: PC,
            records: [
              remoteRecord({ id: 10, name: "GeoIP", plugin: 1, order: 1, enabled: true, description: "x" }),
            ],
          },
        ],
      },
    );
    expect(errors).toEqual([]);
    expect(plan?.summary).toEqual({ create: 1, update: 0, delete: 0, reorder: 0 });
    expect(plan?.changes[0]).toMatchObject({
      action: "create",
      name: "Filter",
      id: null,
      fields: { plugin: { to: 2 }, order: { to: 2 }, description: { to: "new" }, name: { to: "Filter" } },
    });
  });

  it("reports changed fields as updates and order changes as moves", () => {
    const { plan } = computePlan(
      {
        families: [
          desiredFamily("1", PC, [desiredConfig({ name: "A", plugin: 1, order: 1, enabled: false })]),
        ],
      },
      {
        families: [
          {
            project: "1",
            family: PC,
            records: [remoteRecord({ id: 5, name: "A", plugin: 1, order: 3, enabled: true })],
          },
        ],
      },
    );
    expect(plan?.changes).toEqual([
      expect.objectContaining({ action: "update", id: 5, fields: { enabled: { from: true, to: false } } }),
    ]);
    expect(plan?.reorders).toEqual([
      expect.objectContaining({ moves: [{ id: 5, name: "A", plugin: 1, from: 3, to: 1 }] }),
    ]);
    expect(plan?.fingerprints).toHaveProperty(["1/plugin_configs/5"]);
  });

  it("deletes unclaimed records only with prune, and lists them as unmanaged otherwise", () => {
    const current = {
      families: [
        {
          project: "1",
          family: PC,
          records: [
            remoteRecord({ id: 1, name: "Keep", order: 1 }),
            remoteRecord({ id: 2, name: "Other", order: 2 }),
          ],
        },
      ],
    };
    const keep = [desiredConfig({ name: "Keep", order: 1 })];
    const noPrune = computePlan({ families: [desiredFamily("1", PC, keep)] }, current);
    expect(noPrune.plan?.changes).toEqual([]);
    expect(noPrune.plan?.families[0]?.unmanaged.map((record) => record.id)).toEqual([2]);
    const prune = computePlan({ families: [desiredFamily("1", PC, keep, { prune: true })] }, current);
    expect(prune.plan?.changes).toEqual([
      expect.objectContaining({ action: "delete", id: 2, name: "Other" }),
    ]);
  });

  it("matches a pinned id before names, allowing a rename", () => {
    const { plan, errors } = computePlan(
      { families: [desiredFamily("1", PC, [desiredConfig({ name: "New name", order: 1 }, { id: 7 })])] },
      { families: [{ project: "1", family: PC, records: [remoteRecord({ id: 7, name: "Old", order: 1 })] }] },
    );
    expect(errors).toEqual([]);
    expect(plan?.changes).toEqual([
      expect.objectContaining({ action: "update", id: 7, fields: { name: { from: "Old", to: "New name" } } }),
    ]);
  });

  it("refuses two remote records with one name, naming the ids and the fix", () => {
    const { plan, errors } = computePlan(
      { families: [desiredFamily("1", PC, [desiredConfig({ name: "Dup" }, { line: 9 })])] },
      {
        families: [
          {
            project: "1",
            family: PC,
            records: [remoteRecord({ id: 3, name: "Dup" }), remoteRecord({ id: 4, name: "Dup" })],
          },
        ],
      },
    );
    expect(plan).toBeUndefined();
    expect(errors[0]?.message).toContain("ids 3, 4");
    expect(errors[0]?.message).toContain('"id:"');
    expect(errors[0]?.source).toBe("pcsync.yaml:9");
  });

  it("refuses a record claimed twice and a pinned id that does not exist", () => {
    const { errors } = computePlan(
      {
        families: [
          desiredFamily("1", PC, [
            desiredConfig({ name: "X" }, { id: 3 }),
            desiredConfig({ name: "Y" }, { id: 3 }),
            desiredConfig({ name: "Z" }, { id: 99 }),
          ]),
        ],
      },
      { families: [{ project: "1", family: PC, records: [remoteRecord({ id: 3, name: "X" })] }] },
    );
    expect(errors.map((error) => error.message)).toEqual([
      expect.stringContaining("record 3 is claimed twice"),
      expect.stringContaining("id 99"),
    ]);
  });

  it("never prunes through plugin_configs a record that the frontend family lists (posthog-2024 overlap)", () => {
    const banner = remoteRecord({ id: 20, name: "Banner", plugin: 40, order: 1, enabled: true });
    const stray = remoteRecord({ id: 21, name: "Stray", plugin: 41, order: 2 });
    const geo = remoteRecord({ id: 1, name: "GeoIP", plugin: 1, order: 1 });
    const { plan, errors } = computePlan(
      {
        families: [
          desiredFamily("1", PC, [desiredConfig({ name: "GeoIP", plugin: 1, order: 1 })], { prune: true }),
          desiredFamily("1", FE, [desiredConfig({ name: "Banner", plugin: 40, order: 1, enabled: true })]),
        ],
      },
      {
        families: [
          { project: "1", family: PC, records: [geo, banner, stray] },
          { project: "1", family: FE, records: [banner, stray] },
        ],
      },
    );
    expect(errors).toEqual([]);
    expect(plan?.changes).toEqual([]);
    expect(
      plan?.families.find((family) => family.family === FE)?.unmanaged.map((record) => record.id),
    ).toEqual([21]);
  });

  describe("a plugin config named like a frontend app that plugin_configs also lists (posthog-2024)", () => {
    const banner = remoteRecord({ id: 20, name: "Banner", plugin: 40, order: 1, enabled: true });
    const planOf = (pc: Partial<Parameters<typeof desiredConfig>[0]>, frontendManaged: boolean) =>
      computePlan(
        {
          families: [
            desiredFamily("1", PC, [desiredConfig({ name: "Banner", order: 1, ...pc })]),
            ...(frontendManaged
              ? [
                  desiredFamily("1", FE, [
                    desiredConfig({ name: "Banner", plugin: 40, order: 1, enabled: true }),
                  ]),
                ]
              : []),
          ],
        },
        {
          families: [
            { project: "1", family: PC, records: [banner] },
            { project: "1", family: FE, records: [banner] },
          ],
        },
      );

    it.each([true, false])(
      "of another plugin is another record: created, never the app changed or deleted (frontend apps managed: %s)",
      (frontendManaged) => {
        const kept = planOf({ plugin: 9, enabled: false }, frontendManaged);
        expect(kept.errors).toEqual([]);
        expect(kept.plan?.changes).toEqual([
          expect.objectContaining({ action: "create", family: PC, name: "Banner" }),
        ]);
        const deleted = planOf({ plugin: 9, deleted: true }, frontendManaged);
        expect(deleted.errors).toEqual([]);
        expect(deleted.plan?.changes).toEqual([]);
        const lookAlike = planOf({ name: "Banner ", plugin: 9 }, frontendManaged);
        expect(lookAlike.plan?.changes).toEqual([expect.objectContaining({ action: "create", family: PC })]);
      },
    );

    it("of the app's plugin is the app, managed through plugin_configs when its own family is not", () => {
      const { plan, errors } = planOf({ plugin: 40, enabled: false }, false);
      expect(errors).toEqual([]);
      expect(plan?.changes).toEqual([expect.objectContaining({ action: "update", family: PC, id: 20 })]);
      expect(planOf({ plugin: 40, enabled: false }, true).errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('record 20 ("Banner") is claimed twice'),
        }),
      ]);
    });
  });

  it("treats a null description shown as the plugin's own (posthog-2024 fallback) as unchanged", () => {
    const { plan } = computePlan(
      { families: [desiredFamily("1", PC, [desiredConfig({ name: "A", order: 1, description: null })])] },
      {
        families: [
          {
            project: "1",
            family: PC,
            records: [
              remoteRecord({
                id: 1,
                name: "A",
                order: 1,
                description: "Plugin text",
                plugin_info: JSON.stringify({ id: 1, name: "GeoIP", description: "Plugin text" }),
              }),
            ],
          },
        ],
      },
    );
    expect(plan?.changes).toEqual([]);
  });

  it("raises the safety guards: pruning to empty, and deleting more than the allowed share", () => {
    const many = Array.from({ length: 10 }, (_, index) => remoteRecord({ id: index + 1, name: `R${index}` }));
    const keepThree = many.slice(0, 3).map((record) => desiredConfig({ name: String(record.name) }));
    const partial = computePlan(
      { families: [desiredFamily("1", PC, keepThree, { prune: true })] },
      { families: [{ project: "1", family: PC, records: many }] },
    );
    expect(partial.plan?.guards.map((guard) => guard.rule)).toEqual(["max_delete_percent"]);
    const allowed = computePlan(
      { families: [desiredFamily("1", PC, keepThree, { prune: true })] },
      { families: [{ project: "1", family: PC, records: many }] },
      { maxDeletePercent: 80 },
    );
    expect(allowed.plan?.guards).toEqual([]);
    const empty = computePlan(
      { families: [desiredFamily("1", PC, [], { prune: true })] },
      { families: [{ project: "1", family: PC, records: many.slice(0, 2) }] },
    );
    expect(empty.plan?.guards.map((guard) => guard.rule)).toEqual(["prune_to_empty"]);
  });

  it("is deterministic", () => {
    const desired = {
      families: [desiredFamily("1", PC, [desiredConfig({ name: "A", order: 2 })], { prune: true })],
    };
    const current = {
      families: [{ project: "1", family: PC, records: [remoteRecord({ id: 1, name: "B" })] }],
    };
    expect(computePlan(desired, current)).toEqual(computePlan(desired, current));
  });
});

describe("a saved plan that creates a plugin config named like a frontend app (posthog-2024)", () => {
  const FE_ = "pipeline_frontend_apps_configs" as const;
  const { plan } = computePlan(
    { families: [desiredFamily("1", PC, [desiredConfig({ name: "Banner", plugin: 9, order: 1 })])] },
    { families: [{ project: "1", family: PC, records: [] }] },
  );
  if (plan === undefined) throw new Error("no plan");

  it("is not stale for an app of that name made since, which plugin_configs also lists", () => {
    const app = remoteRecord({ id: 20, name: "Banner", plugin: 40 });
    const lists = (frontend: boolean) => ({
      families: [
        { project: "1", family: PC, records: [app] },
        ...(frontend ? [{ project: "1", family: FE_, records: [app] }] : []),
      ],
    });
    expect(findPlanProblems(plan, lists(true))).toEqual([]);
    // Without the apps' list, nothing tells it from a plugin config of that name: stale.
    expect(findPlanProblems(plan, lists(false))).toEqual([
      expect.stringContaining('a record named "Banner" (id 20) now exists in project 1 plugin_configs'),
    ]);
  });

  it("is stale for a plugin config of that name made since, whatever its plugin", () => {
    const made = remoteRecord({ id: 21, name: "Banner", plugin: 2 });
    expect(findPlanProblems(plan, { families: [{ project: "1", family: PC, records: [made] }] })).toEqual([
      expect.stringContaining('a record named "Banner" (id 21) now exists'),
    ]);
  });
});
