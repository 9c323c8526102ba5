// Which record a rollout judges for each config its plan creates or updates, found in the re-read:
// never a frontend app of the same name that plugin_configs also lists (posthog-2024), whatever
// the order the service lists them in.

import { describe, expect, it } from "vitest";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { CurrentState } from "../../src/plan/types.js";
import { judgedConfigs, rolloutTargets } from "../../src/rollout/run-rollout.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";

const PC = "plugin_configs" as const;
const FE = "pipeline_frontend_apps_configs" as const;

describe("the records a rollout judges", () => {
  const app = remoteRecord({ id: 6, name: "app-banner", plugin: 41 });
  const config = remoteRecord({ id: 7, name: "app-banner", plugin: 9 });
  // The app first, as a service that lists by plugin id would when the app's plugin id is lower.
  const reread: CurrentState = {
    families: [
      { project: "2", family: PC, records: [app, config] },
      { project: "2", family: FE, records: [app] },
    ],
  };

  it.each([
    ["a create, by its name and plugin", { plugin: 9 }],
    ["an update, by its id", { id: 7 }],
    ["a target of an older journal, by its name among plugin_configs' own records", {}],
  ])("%s", (_what, found) => {
    const targets = [{ project: "2", family: PC, name: "app-banner", ...found }];
    expect(judgedConfigs(targets, "2", reread).map((judged) => judged.id)).toEqual([7]);
  });

  it("tell a frontend app that plugin_configs also lists, managed there, by its id in the frontend apps' list", () => {
    const targets = [
      { project: "2", family: PC, name: "app-banner", id: 6 },
      { project: "2", family: PC, name: "app-banner", id: 7 },
      { project: "2", family: FE, name: "app-banner", id: 6 },
    ];
    expect(
      ["1", "2"].flatMap((project) =>
        judgedConfigs(targets, project, reread).map(({ family, id, frontendApp }) => ({
          family,
          id,
          frontendApp,
        })),
      ),
    ).toEqual([
      { family: PC, id: 6, frontendApp: true },
      { family: PC, id: 7, frontendApp: false },
    ]);
    expect(judgedConfigs(targets.slice(2), "2", reread)).toMatchObject([
      { family: FE, id: 6, frontendApp: true },
    ]);
  });

  it("are judged from their write as the read right after the wave's writes found it", () => {
    const stamped = (updatedAt: string): CurrentState => ({
      families: [
        { project: "2", family: PC, records: [{ ...config, updated_at: updatedAt }] },
        { project: "2", family: FE, records: [] },
      ],
    });
    const targets = [{ project: "2", family: PC, name: "app-banner", id: 7 }];
    const afterBake = stamped("2026-01-01T00:10:00.000Z");
    expect(judgedConfigs(targets, "2", afterBake, stamped("2026-01-01T00:00:00.100Z"))).toMatchObject([
      { id: 7, writtenAt: new Date("2026-01-01T00:00:00.100Z") },
    ]);
    // A read after the writes that did not hold it: as the later read found it.
    expect(judgedConfigs(targets, "2", afterBake, { families: [] })).toMatchObject([
      { id: 7, writtenAt: new Date("2026-01-01T00:10:00.000Z") },
    ]);
  });

  it("are named by the plan's changes with the record an update writes and the plugin a create runs", () => {
    const { plan } = computePlan(
      {
        families: [
          desiredFamily("2", PC, [
            desiredConfig({ name: "app-banner", plugin: 9, order: 1 }),
            desiredConfig({ name: "GeoIP", plugin: 1, order: 2, description: "new" }),
          ]),
        ],
      },
      {
        families: [
          {
            project: "2",
            family: PC,
            records: [app, remoteRecord({ id: 5, name: "GeoIP", plugin: 1, order: 2 })],
          },
          { project: "2", family: FE, records: [app] },
        ],
      },
    );
    expect(plan === undefined ? [] : rolloutTargets(plan)).toEqual([
      { project: "2", family: PC, name: "app-banner", plugin: 9 },
      { project: "2", family: PC, name: "GeoIP", id: 5 },
    ]);
  });
});
