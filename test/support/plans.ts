// Plans for the renderer tests: one representative plan made by the planner, and random plans of
// any size, with names meant to break renderers.

import { FAMILY_NAMES, type FamilyName } from "../../src/families.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { FieldChanges, FieldValue, Plan, PlannedChange, PlannedReorder } from "../../src/plan/types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "./builders.js";
import { FE, PC } from "./families.js";
import { fc } from "./fast-check.js";

export const LONG_OLD =
  "Adds the country of the client IP address to every event, so dashboards can break down traffic by region.";
export const LONG_NEW =
  "Adds the country and city of the client IP address to every event, so dashboards can break down traffic by region.";

/**
 * Project 1: a create, two updates (one of a long description), a prune delete of an oddly named
 * record and two moves in plugin_configs; two unmanaged frontend apps. Project 2: a prune that
 * would empty the family, so a guard is violated.
 */
export function buildRepresentativePlan(): Plan {
  const { plan, errors } = computePlan(
    {
      families: [
        desiredFamily(
          "1",
          PC,
          [
            desiredConfig({ name: "GeoIP", plugin: 12, order: 1, enabled: true }, { line: 8 }),
            desiredConfig(
              { name: "Filter", plugin: 2, order: 2, enabled: true, description: "Drops bots" },
              { line: 12 },
            ),
            desiredConfig({ name: "Tagger", plugin: 3, order: 3, description: LONG_NEW }, { line: 16 }),
          ],
          { prune: true },
        ),
        desiredFamily("1", FE, [desiredConfig({ name: "Banner", plugin: 40, order: 1 }, { line: 22 })]),
        desiredFamily("2", PC, [], { prune: true }),
      ],
    },
    {
      families: [
        {
          project: "1",
          family: PC,
          records: [
            remoteRecord({ id: 4, name: "GeoIP", plugin: 12, order: 3, enabled: false }),
            remoteRecord({ id: 5, name: "Tagger", plugin: 3, order: 2, description: LONG_OLD }),
            remoteRecord({ id: 6, name: "Old | <b>", plugin: 9, order: 1 }),
          ],
        },
        {
          project: "1",
          family: FE,
          records: [
            remoteRecord({ id: 20, name: "Banner", plugin: 40, order: 1 }),
            remoteRecord({ id: 7, name: "Stray", plugin: 41, order: 2 }),
            remoteRecord({ id: 9, name: null, plugin: 42, order: 3 }),
          ],
        },
        {
          project: "2",
          family: PC,
          records: [
            remoteRecord({ id: 30, name: "A", order: 1 }),
            remoteRecord({ id: 31, name: "B", order: 2 }),
          ],
        },
      ],
    },
    {},
  );
  if (!plan) throw new Error(`fixture plan failed: ${errors.map((error) => error.message).join("; ")}`);
  return plan;
}

/** Names that have broken renderers: markdown and HTML syntax, fences, control characters, emoji. */
const weirdName = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "| pipe | name |",
    "<details>",
    "</details></summary>",
    "```",
    "````diff\n- x",
    "<!-- pcsync-plan -->",
    "@everyone **bold** _it_ [link](http://x) $x$",
    "line\nbreak\r\n\ttab\u001b[31m",
    "😀".repeat(50),
    "a".repeat(2_000),
  ),
);

const fieldValue: fc.Arbitrary<FieldValue> = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  weirdName,
  fc.lorem({ maxCount: 40 }),
);

const family = fc.constantFrom<FamilyName>(...FAMILY_NAMES);
const project = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("1", "2", "42") },
  { weight: 1, arbitrary: weirdName },
);
const source = fc.oneof(
  fc.constant("pcsync.yaml:3"),
  weirdName.map((name) => `${name}:7`),
);

const updateFields: fc.Arbitrary<FieldChanges> = fc
  .record(
    {
      enabled: fc.record({ from: fieldValue, to: fieldValue }),
      description: fc.record({ from: fieldValue, to: fieldValue }),
      name: fc.record({ from: fieldValue, to: fieldValue }),
    },
    { requiredKeys: [] },
  )
  .filter((fields) => Object.keys(fields).length > 0);

const change: fc.Arbitrary<PlannedChange> = fc.oneof(
  fc.record({
    action: fc.constant("create" as const),
    project,
    family,
    name: weirdName,
    id: fc.constant(null),
    fields: fc.record({
      plugin: fc.record({ from: fc.constant(undefined), to: fc.nat() }),
      description: fc.record({ from: fc.constant(undefined), to: fieldValue }),
    }),
    source,
  }),
  fc.record({
    action: fc.constant("update" as const),
    project,
    family,
    name: weirdName,
    id: fc.nat(),
    fields: updateFields,
    source,
  }),
  fc.record({
    action: fc.constant("delete" as const),
    project,
    family,
    name: fc.option(weirdName, { nil: null }),
    id: fc.nat(),
    fields: fc.constant({}),
    source,
  }),
);

const reorder: fc.Arbitrary<PlannedReorder> = fc.record({
  project,
  family,
  moves: fc.array(
    fc.record({
      id: fc.nat(),
      name: fc.option(weirdName, { nil: null }),
      plugin: fc.nat(),
      from: fc.nat(),
      to: fc.nat(),
    }),
    { minLength: 1, maxLength: 50 },
  ),
  source,
});

/** Repeats a small random set of changes to reach `size` changes: big plans without slow generation. */
export function arbitraryPlan(maxChanges: number): fc.Arbitrary<Plan> {
  return fc
    .record({
      changes: fc.array(change, { maxLength: 40 }),
      reorders: fc.array(reorder, { maxLength: 5 }),
      size: fc.nat({ max: maxChanges }),
      unmanagedNames: fc.array(fc.option(weirdName, { nil: null }), { maxLength: 8 }),
      guardSource: fc.option(weirdName, { nil: undefined }),
      projectSpread: fc.integer({ min: 1, max: 5_000 }),
    })
    .map(({ changes, reorders, size, unmanagedNames, guardSource, projectSpread }) => {
      const all: PlannedChange[] = [];
      // Spread the copies over many projects when asked, so some plans have thousands of families.
      for (let index = 0; changes.length > 0 && index < size; index += 1) {
        const template = changes[index % changes.length] as PlannedChange;
        all.push({ ...template, project: `${template.project}-${index % projectSpread}` });
      }
      return {
        format: "pcsync-plan",
        version: 2,
        summary: {
          create: all.filter((item) => item.action === "create").length,
          update: all.filter((item) => item.action === "update").length,
          delete: all.filter((item) => item.action === "delete").length,
          reorder: reorders.reduce((total, item) => total + item.moves.length, 0),
        },
        changes: all,
        reorders,
        families: [
          {
            project: "1",
            family: FE,
            prune: false,
            recordCount: unmanagedNames.length,
            membership: "0123456789abcdef",
            unmanaged: unmanagedNames.map((name, index) => ({
              id: index + 1,
              name,
              plugin: 1,
              order: index + 1,
              enabled: true,
            })),
          },
        ],
        fingerprints: {},
        guards:
          guardSource === undefined
            ? []
            : [
                {
                  project: "1",
                  family: PC,
                  rule: "max_delete_percent" as const,
                  owned: 10,
                  deletes: 5,
                  limitPercent: 30,
                  source: guardSource,
                },
              ],
      } satisfies Plan;
    });
}
