// The membership check of a saved plan that prunes or reorders a family: a record of another family
// that the list also shows (a frontend app in posthog-2024's plugin_configs), made or deleted
// since, leaves the plan standing where the plan and the lists read now tell the families apart; a
// record of the family's own does not.

import { describe, expect, it } from "vitest";
import { sameMembership } from "../../src/plan/check-stale.js";
import { fingerprintMembership } from "../../src/plan/fingerprint.js";
import type { CurrentState } from "../../src/plan/types.js";
import { remoteRecord } from "../support/builders.js";

const PC = "plugin_configs" as const;
const FE = "pipeline_frontend_apps_configs" as const;
const config = remoteRecord({ id: 1, name: "GeoIP", plugin: 1 });
const app = remoteRecord({ id: 2, name: "Banner", plugin: 40 });
const newApp = remoteRecord({ id: 3, name: "Bar", plugin: 41 });
const newConfig = remoteRecord({ id: 4, name: "New", plugin: 8 });

// Made when plugin_configs listed the config and one app.
const REPORT = {
  project: "1",
  family: PC,
  membership: fingerprintMembership([config, app]),
  ownMembership: fingerprintMembership([config]),
};

function lists(pc: ReturnType<typeof remoteRecord>[], fe?: ReturnType<typeof remoteRecord>[]): CurrentState {
  return {
    families: [
      { project: "1", family: PC, records: pc },
      ...(fe === undefined ? [] : [{ project: "1", family: FE, records: fe }]),
    ],
  };
}

describe("sameMembership", () => {
  it.each([
    ["nothing changed", [config, app], [app], undefined, true],
    ["an app made since, the apps' list read", [config, app, newApp], [app, newApp], undefined, true],
    ["an app deleted since, the apps' list read", [config], [], undefined, true],
    ["an app made since, the apps' list not read", [config, app, newApp], undefined, undefined, false],
    ["a plugin config made since", [config, app, newConfig], [app], undefined, false],
    ["the config gone, an app made in its place", [app, newApp], [app, newApp], undefined, false],
    ["a plan of an older pcsync (no ownMembership)", [config, app, newApp], [app, newApp], "older", false],
  ] as const)("%s", (_, pc, fe, older, same) => {
    const { ownMembership: _own, ...olderReport } = REPORT;
    const report = older === undefined ? REPORT : olderReport;
    const current = lists([...pc], fe === undefined ? undefined : [...fe]);
    expect(sameMembership(current, report, [...pc])).toBe(same);
  });
});
