// Property tests: whatever the projects hold (shared or not, orders with gaps and ties, names that
// need quoting or hold `${`, two records of one name, which export pins by id, both families), the
// exported manifest plans back to no changes.

import { describe, expect, it } from "vitest";
import { buildManifest } from "../../src/export/build-manifest.js";
import { factorTemplates } from "../../src/export/factor-templates.js";
import { renderNewManifest, renderTemplatedManifest } from "../../src/export/update-manifest.js";
import type { FamilyName } from "../../src/families.js";
import { loadManifestSources } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { CurrentFamily } from "../../src/plan/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { remoteRecord } from "../support/builders.js";
import { FE, PC } from "../support/families.js";
import { fc } from "../support/fast-check.js";

const NAMES = ["GeoIP", "yes", "Cost ${MONTH}", "a: b", "$${x}", "Filter"];

/** A config as a project may have it: the same few values, so that projects often share. */
const configArbitrary = fc.record({
  name: fc.constantFrom(...NAMES),
  plugin: fc.integer({ min: 1, max: 2 }),
  enabled: fc.boolean(),
  description: fc.constantFrom(null, "Adds the country", "${internal}"),
  order: fc.integer({ min: 1, max: 4 }),
});

/** A family's list: a base list most projects take whole or in part, plus configs of its own. */
const fleetArbitrary = fc
  .record({
    base: fc.uniqueArray(configArbitrary, { minLength: 1, maxLength: 5, selector: (config) => config.name }),
    projects: fc.array(
      fc.record({
        keep: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        positional: fc.boolean(),
        own: fc.uniqueArray(configArbitrary, { maxLength: 2, selector: (config) => config.name }),
        frontendApps: fc.integer({ min: 0, max: 2 }),
        // A second record of its first config's name and fields: the two are pinned by id, and
        // equal to what other projects hold unpinned.
        twice: fc.boolean(),
      }),
      { minLength: 0, maxLength: 5 },
    ),
  })
  .map(({ base, projects }) => {
    let nextId = 1;
    return projects.map((project, index): CurrentFamily[] => {
      const kept = base.filter((_, position) => project.keep[position]);
      const own = project.own.filter((config) => !kept.some((other) => other.name === config.name));
      const configs = [...kept, ...own];
      const first = configs[0];
      if (project.twice && first !== undefined) configs.push(first);
      const pluginConfigs = configs.map((config, position) =>
        remoteRecord({
          ...config,
          id: nextId++,
          order: project.positional ? position + 1 : config.order,
        }),
      );
      const frontendApps = Array.from({ length: project.frontendApps }, (_, position) =>
        remoteRecord({ id: nextId++, name: `App ${position}`, plugin: 40 + position, order: position + 1 }),
      );
      const projectId = String(index + 1);
      return [
        { project: projectId, family: PC, records: pluginConfigs },
        { project: projectId, family: FE, records: frontendApps },
      ];
    });
  });

function exportFleet(fleet: CurrentFamily[][]) {
  return fleet.map((lists) =>
    buildManifest({
      project: lists[0]?.project ?? "",
      families: lists.map((list) => ({
        family: list.family as FamilyName,
        records: list.records as PluginConfigRecord[],
      })),
    }),
  );
}

/** Each project's configs as a manifest says them: family, name and pinned id, sorted. */
function configsOf(text: string) {
  const loaded = loadManifestSources([{ file: "export.yaml", text }]);
  expect(loaded.errors).toEqual([]);
  if (!loaded.value) throw new Error("no desired state");
  return loaded.value.families
    .flatMap(({ project, family, configs }) =>
      configs.map((config) => JSON.stringify([project, family, config.fields.name, config.id ?? null])),
    )
    .sort();
}

/** Loads the text and plans it against the lists it was exported from. */
function planBack(text: string, fleet: CurrentFamily[][]) {
  const loaded = loadManifestSources([{ file: "export.yaml", text }]);
  expect(loaded.errors).toEqual([]);
  if (!loaded.value) throw new Error("no desired state");
  const { plan, errors } = computePlan(loaded.value, { families: fleet.flat() });
  expect(errors).toEqual([]);
  return plan?.summary;
}

const NO_CHANGES = { create: 0, update: 0, delete: 0, reorder: 0 };

describe("an export plans back to no changes", () => {
  it("written out, every project in one file", () => {
    fc.assert(
      fc.property(fleetArbitrary, (fleet) => {
        if (fleet.length === 0) return;
        expect(planBack(renderNewManifest(exportFleet(fleet)), fleet)).toEqual(NO_CHANGES);
      }),
    );
  });

  it("with --templates", () => {
    fc.assert(
      fc.property(fleetArbitrary, (fleet) => {
        if (fleet.length === 0) return;
        const results = exportFleet(fleet);
        const templated = renderTemplatedManifest(factorTemplates(results), results);
        expect(planBack(templated, fleet)).toEqual(NO_CHANGES);
        // Every project manages what the plain export gives it: the same configs, pinned alike
        // (no change to plan back can hide a config a project lost, with prune off).
        expect(configsOf(templated)).toEqual(configsOf(renderNewManifest(results)));
      }),
    );
  });
});
