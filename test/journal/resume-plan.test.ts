// What of a saved plan an interrupted apply did (resume-plan.ts), on a server that shows the
// plugin's own text for an empty description (posthog-2024): the run's write of null is the run's,
// not a change by someone else, once the plugin's text is known; without it, the plan is stale.

import { describe, expect, it } from "vitest";
import { findPlanProblems } from "../../src/apply/check-saved-plan.js";
import type { PluginTexts } from "../../src/journal/journal-format.js";
import type { TouchedRecord } from "../../src/journal/replay-journal.js";
import { planResume } from "../../src/journal/resume-plan.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";

const PC = "plugin_configs" as const;
const PLUGIN_TEXT = "Remove chosen properties from every event.";

describe("resuming a saved plan that empties a description", () => {
  const before = remoteRecord({ id: 100, name: "Property Filter", plugin: 2, description: "kept by hand" });
  const { plan } = computePlan(
    {
      families: [
        desiredFamily("2", PC, [desiredConfig({ name: "Property Filter", plugin: 2, description: null })]),
      ],
    },
    { families: [{ project: "2", family: PC, records: [before] }] },
  );
  if (plan === undefined) throw new Error("no plan");
  // After the run's write, the service shows the plugin's text for the empty description.
  const now = {
    families: [{ project: "2", family: PC, records: [{ ...before, description: PLUGIN_TEXT }] }],
  };
  const replay = (pluginTexts?: PluginTexts) => {
    const touched: TouchedRecord = {
      project: "2",
      family: PC,
      id: 100,
      name: "Property Filter",
      before: { ...before },
      after: new Map([["description", [null]]]),
      sent: new Set(["description"]),
      line: 2,
      ...(pluginTexts === undefined ? {} : { pluginTexts }),
    };
    return { records: new Map([["2/plugin_configs/100", touched]]), lostCreates: [] };
  };

  it("knows the plugin's text for the run's own write: nothing stale, the change done", () => {
    expect(plan.changes).toEqual([expect.objectContaining({ action: "update", id: 100 })]);
    const resumed = planResume(plan, replay({ description: PLUGIN_TEXT }), now);
    expect(resumed.reasons).toEqual([]);
    expect(resumed.done).toBe(1);
  });

  it("without the plugin's text, cannot tell the run's write from another's: stale", () => {
    expect(planResume(plan, replay(), now).reasons).toEqual([
      expect.stringContaining('record 100 ("Property Filter") in project 2 plugin_configs was changed'),
    ]);
  });
});

describe("a stale saved plan", () => {
  it("names a record it both changes and moves once", () => {
    const records = [
      remoteRecord({ id: 100, name: "A", plugin: 2, order: 1 }),
      remoteRecord({ id: 101, name: "B", plugin: 3, order: 2, description: "old" }),
    ];
    const { plan } = computePlan(
      {
        families: [
          desiredFamily("2", PC, [
            desiredConfig({ name: "B", plugin: 3, description: "new" }),
            desiredConfig({ name: "A", plugin: 2 }),
          ]),
        ],
      },
      { families: [{ project: "2", family: PC, records }] },
    );
    if (plan === undefined) throw new Error("no plan");
    expect(plan.changes).toEqual([expect.objectContaining({ action: "update", id: 101 })]);
    expect(plan.reorders.flatMap((reorder) => reorder.moves.map((move) => move.id))).toContain(101);
    const changed = records.map((record) => (record.id === 101 ? { ...record, enabled: true } : record));
    const reasons = findPlanProblems(plan, { families: [{ project: "2", family: PC, records: changed }] });
    expect(reasons.length).toBeGreaterThan(0);
    expect(new Set(reasons).size).toBe(reasons.length);
  });
});

describe("resuming a saved plan whose run deleted records, on a server whose plugin_configs list shows the frontend apps or not", () => {
  const FE = "pipeline_frontend_apps_configs" as const;
  const pc = remoteRecord({ id: 5, name: "GeoIP", plugin: 1 });
  const fe = (id: number, name: string) => remoteRecord({ id, name, plugin: 43 });
  const deletedByRun = (
    record: ReturnType<typeof remoteRecord>,
    family: typeof PC | typeof FE,
  ): TouchedRecord => ({
    project: "2",
    family,
    id: record.id,
    name: record.name,
    before: { ...record },
    after: new Map(),
    sent: new Set(["deleted", "enabled"]),
    line: 2,
  });
  const replayOf = (...touched: TouchedRecord[]) => ({
    records: new Map(touched.map((record) => [`2/${record.family}/${record.id}`, record])),
    lostCreates: [],
  });
  const planOf = (
    pcList: ReturnType<typeof remoteRecord>[],
    feList: ReturnType<typeof remoteRecord>[],
    keepFe: string[],
  ) => {
    const { plan } = computePlan(
      {
        families: [
          desiredFamily("2", PC, [], { prune: true }),
          desiredFamily(
            "2",
            FE,
            keepFe.map((name) => desiredConfig({ name, plugin: 43 })),
            { prune: true },
          ),
        ],
      },
      {
        families: [
          { project: "2", family: PC, records: pcList },
          { project: "2", family: FE, records: feList },
        ],
      },
    );
    if (plan === undefined) throw new Error("no plan");
    return plan;
  };

  it("a plugin config the run deleted is not taken for a frontend app when plugin_configs holds only frontend apps since", () => {
    const apps = [fe(6, "early-access"), fe(7, "app-banner")];
    // posthog-2024: plugin_configs lists its own record and the frontend apps.
    const plan = planOf([pc, ...apps], apps, ["early-access"]);
    expect(plan.changes.map((change) => [change.action, change.id])).toEqual([
      ["delete", 5],
      ["delete", 7],
    ]);
    const now = {
      families: [
        { project: "2", family: PC, records: apps },
        { project: "2", family: FE, records: apps },
      ],
    };
    const resumed = planResume(plan, replayOf(deletedByRun(pc, PC)), now);
    expect(resumed.reasons).toEqual([]);
    expect(resumed.done).toBe(1);
  });

  it.each([
    ["posthog-2024 (plugin_configs lists the frontend apps)", true],
    ["seed (each list its own)", false],
  ])("the run deleted every frontend app, so no list tells which lists show them: %s", (_, overlap) => {
    const app = fe(6, "early-access");
    const plan = planOf(overlap ? [pc, app] : [pc], [app], []);
    expect(plan.changes.map((change) => [change.action, change.id]).sort()).toEqual([
      ["delete", 5],
      ["delete", 6],
    ]);
    const now = {
      families: [
        { project: "2", family: PC, records: [pc] },
        { project: "2", family: FE, records: [] },
      ],
    };
    const resumed = planResume(plan, replayOf(deletedByRun(app, FE)), now);
    expect(resumed.reasons).toEqual([]);
    expect(resumed.remaining.changes.map((change) => change.id)).toEqual([5]);
  });

  it("still sees a record someone else deleted", () => {
    const apps = [fe(6, "early-access"), fe(7, "app-banner")];
    const other = fe(8, "other");
    const withOther = planOf([pc, ...apps, other], [...apps, other], ["early-access", "app-banner"]);
    expect(withOther.changes.map((change) => [change.action, change.id]).sort()).toEqual([
      ["delete", 5],
      ["delete", 8],
    ]);
    // The run deleted 5; someone else deleted 7 meanwhile.
    const now = {
      families: [
        { project: "2", family: PC, records: [apps[0], other] },
        { project: "2", family: FE, records: [apps[0], other] },
      ] as { project: string; family: typeof PC | typeof FE; records: ReturnType<typeof remoteRecord>[] }[],
    };
    const resumed = planResume(withOther, replayOf(deletedByRun(pc, PC)), now);
    // The frontend apps' family changed; plugin_configs' own records (5, the run's) did not, though
    // its list, which also shows the apps, did.
    expect(resumed.reasons).toEqual([
      "the set of records in project 2 pipeline_frontend_apps_configs changed (records were added or removed)",
    ]);
  });
});

describe("resuming a saved plan whose run lost the answer to a create", () => {
  const FE = "pipeline_frontend_apps_configs" as const;
  // Project 1 has a frontend app named "Notification Bar"; the plan creates a plugin config of that
  // name (another plugin) and updates the frontend app. The run was killed after sending the create.
  const app = remoteRecord({ id: 4, name: "Notification Bar", plugin: 40, enabled: true });
  const { plan } = computePlan(
    {
      families: [
        desiredFamily("1", PC, [desiredConfig({ name: "Notification Bar", plugin: 1 })]),
        desiredFamily("1", FE, [desiredConfig({ name: "Notification Bar", plugin: 40, enabled: false })]),
      ],
    },
    {
      families: [
        { project: "1", family: PC, records: [] },
        { project: "1", family: FE, records: [app] },
      ],
    },
  );
  if (plan === undefined) throw new Error("no plan");
  const replay = {
    records: new Map<string, TouchedRecord>(),
    lostCreates: [
      {
        project: "1",
        family: PC,
        name: "Notification Bar",
        plugin: 1,
        send: { name: "Notification Bar", plugin: 1 },
        kept: [] as number[],
        line: 2,
      },
    ],
  };
  const made = remoteRecord({ id: 6, name: "Notification Bar", plugin: 1 });

  it("takes the create's record for the run's, and another family's record of that name for no one's", () => {
    const resumed = planResume(plan, replay, {
      families: [
        { project: "1", family: PC, records: [made] },
        { project: "1", family: FE, records: [app] },
      ],
    });
    expect(resumed.reasons).toEqual([]);
    expect(resumed.done).toBe(1);
    expect(resumed.remaining.changes).toEqual([expect.objectContaining({ action: "update", id: 4 })]);
  });

  it("where the create never landed, leaves it to do", () => {
    const resumed = planResume(plan, replay, {
      families: [
        { project: "1", family: PC, records: [] },
        { project: "1", family: FE, records: [app] },
      ],
    });
    expect(resumed.reasons).toEqual([]);
    expect(resumed.remaining.changes.map((change) => change.action).sort()).toEqual(["create", "update"]);
  });
});
