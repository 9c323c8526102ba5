import { describe, expect, it } from "vitest";
import { FAMILY_NAMES, WRITABLE_FIELDS } from "../../src/families.js";
import { readJsonFileSchema } from "../../src/files/json-file-schemas.js";
import { InputError } from "../../src/input-error.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { parsePlanFile, serializePlan } from "../../src/plan/plan-file.js";
import { getPlanValidator } from "../../src/plan/plan-validator.js";
import type {
  ChangeMark,
  FamilyReport,
  FieldChange,
  GuardViolation,
  MaxDeletePercentFinding,
  MaxUpdatePercentFinding,
  OrderMove,
  OrderTie,
  Plan,
  PlannedChange,
  PlannedReorder,
  PlanRollout,
  PlanSummary,
  PlanTargets,
  PlanWave,
  ProtectEntry,
  ProtectedFinding,
  PruneToEmptyFinding,
  TiedConfig,
  TiedRecord,
  UnmanagedRecord,
} from "../../src/plan/types.js";
import { renderJson } from "../../src/render/index.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { fc } from "../support/fast-check.js";
import { buildRepresentativePlan } from "../support/plans.js";

/** A plan with every property and every variant set, typed as Plan so the compiler checks it. */
const FULL_PLAN: Plan = {
  format: "pcsync-plan",
  version: 2,
  owner: "team-a",
  takeover: true,
  summary: { create: 1, update: 1, delete: 1, reorder: 1 },
  changes: [
    {
      action: "create",
      project: "1",
      family: "plugin_configs",
      name: "GeoIP",
      id: null,
      fields: {
        plugin: { from: undefined, to: 12 },
        name: { from: undefined, to: "GeoIP" },
        enabled: { from: undefined, to: true },
        description: { from: undefined, to: null },
        match_action: { from: undefined, to: 3 },
        order: { from: undefined, to: 1 },
      },
      source: "pcsync.yaml:12",
      mark: { owner: "team-a" },
    },
    {
      action: "update",
      project: "1",
      family: "pipeline_frontend_apps_configs",
      name: "Banner",
      id: 20,
      fields: { deleted: { from: true, to: false }, description: { from: "a", to: "b" } },
      source: "dir/apps.yaml:4",
      mark: { owner: "team-a", from: "team-b", keep: null },
    },
    {
      action: "delete",
      project: "2",
      family: "plugin_configs",
      name: null,
      id: 9,
      fields: {},
      source: "pcsync.yaml:3",
    },
  ],
  reorders: [
    {
      project: "1",
      family: "plugin_configs",
      moves: [{ id: 4, name: "Tagger", plugin: 3, from: 2, to: 1 }],
      source: "pcsync.yaml:3",
    },
  ],
  families: [
    {
      project: "1",
      family: "plugin_configs",
      prune: true,
      recordCount: 2,
      membership: "a1b2c3d4e5f60718",
      unmanaged: [{ id: 7, name: null, plugin: 41, order: 2, enabled: false, owner: "team-b" }],
      orderTies: [
        {
          order: 2,
          managed: [
            { id: null, name: "GeoIP", plugin: 12, placed: "create", source: "pcsync.yaml:12" },
            { id: 4, name: "Tagger", plugin: 3, placed: "move", source: "pcsync.yaml:16" },
          ],
          unmanaged: [{ id: 7, name: null, plugin: 41 }],
        },
      ],
      protect: [{ pattern: "Geo*", source: "pcsync.yaml:5" }],
      ignored: 2,
      reorderLeftOut: true,
      pruneKept: { unmarked: 0, otherOwners: 1 },
    },
  ],
  fingerprints: {
    "1/plugin_configs/4": "0f0e0d0c0b0a0908",
    "1/pipeline_frontend_apps_configs/20": "1122334455667788",
  },
  guards: [
    {
      project: "2",
      family: "plugin_configs",
      rule: "prune_to_empty",
      owned: 3,
      deletes: 3,
      source: "a.yaml:4",
    },
  ],
  partial: true,
  targets: { target: ["Geo*"], exclude: ["Banner"] },
  rollout: {
    waves: [
      { name: "canary", projects: ["1"] },
      { name: "rest", projects: ["2"] },
    ],
    bakeSeconds: 600,
    health: { logs: { maxErrorRatio: 0.05, minEntries: 20, allowUnknown: false } },
    failureBudget: 0,
    onFailure: "rollback",
  },
};

// The keys of each type of src/plan/types.ts, checked by the compiler in both directions:
// a key added to or removed from a type breaks these lines until the list (and the schema) follow.
type Presence = "required" | "absent on create" | "optional";
const KEYS = {
  "": {
    format: "required",
    version: "required",
    server: "optional",
    owner: "optional",
    takeover: "optional",
    summary: "required",
    changes: "required",
    reorders: "required",
    families: "required",
    fingerprints: "required",
    guards: "required",
    partial: "optional",
    targets: "optional",
    rollout: "optional",
    notices: "optional",
  } satisfies Record<keyof Plan, Presence>,
  rollout: {
    waves: "required",
    bakeSeconds: "required",
    health: "required",
    failureBudget: "required",
    onFailure: "required",
  } satisfies Record<keyof PlanRollout, Presence>,
  wave: { name: "required", projects: "required" } satisfies Record<keyof PlanWave, Presence>,
  targets: { target: "required", exclude: "required" } satisfies Record<keyof PlanTargets, Presence>,
  protectEntry: { pattern: "required", source: "required", exact: "optional" } satisfies Record<
    keyof ProtectEntry,
    Presence
  >,
  summary: {
    create: "required",
    update: "required",
    delete: "required",
    reorder: "required",
  } satisfies Record<keyof PlanSummary, Presence>,
  change: {
    action: "required",
    project: "required",
    family: "required",
    name: "required",
    id: "required",
    fields: "required",
    lookAlike: "optional",
    explicit: "optional",
    source: "required",
    via: "optional",
    mark: "optional",
  } satisfies Record<keyof PlannedChange, Presence>,
  changeMark: { owner: "required", from: "optional", keep: "optional" } satisfies Record<
    keyof ChangeMark,
    Presence
  >,
  fieldChange: { from: "absent on create", to: "required" } satisfies Record<keyof FieldChange, Presence>,
  move: {
    id: "required",
    name: "required",
    plugin: "required",
    from: "required",
    to: "required",
  } satisfies Record<keyof OrderMove, Presence>,
  reorder: {
    project: "required",
    family: "required",
    moves: "required",
    source: "required",
  } satisfies Record<keyof PlannedReorder, Presence>,
  unmanagedRecord: {
    id: "required",
    name: "required",
    plugin: "required",
    order: "required",
    enabled: "required",
    owner: "optional",
  } satisfies Record<keyof UnmanagedRecord, Presence>,
  familyReport: {
    project: "required",
    family: "required",
    prune: "required",
    recordCount: "required",
    membership: "required",
    ownMembership: "optional",
    unmanaged: "required",
    orderTies: "optional",
    protect: "optional",
    ignored: "optional",
    reorderLeftOut: "optional",
    pruneKept: "optional",
  } satisfies Record<keyof FamilyReport, Presence>,
  orderTie: { order: "required", managed: "required", unmanaged: "required" } satisfies Record<
    keyof OrderTie,
    Presence
  >,
  tiedConfig: {
    id: "required",
    name: "required",
    plugin: "required",
    placed: "required",
    source: "required",
  } satisfies Record<keyof TiedConfig, Presence>,
  tiedRecord: { id: "required", name: "required", plugin: "required" } satisfies Record<
    keyof TiedRecord,
    Presence
  >,
  pruneToEmptyGuard: {
    project: "required",
    family: "required",
    rule: "required",
    owned: "required",
    deletes: "required",
    owner: "optional",
    source: "required",
  } satisfies Record<keyof PruneToEmptyFinding, Presence>,
  maxDeletePercentGuard: {
    project: "required",
    family: "required",
    rule: "required",
    owned: "required",
    deletes: "required",
    limitPercent: "required",
    owner: "optional",
    source: "required",
  } satisfies Record<keyof MaxDeletePercentFinding, Presence>,
  maxUpdatePercentGuard: {
    project: "required",
    family: "required",
    rule: "required",
    owned: "required",
    updates: "required",
    limitPercent: "required",
    source: "required",
  } satisfies Record<keyof MaxUpdatePercentFinding, Presence>,
  protectedGuard: {
    project: "required",
    family: "required",
    rule: "required",
    records: "required",
    source: "required",
  } satisfies Record<keyof ProtectedFinding, Presence>,
  protectedRecord: { id: "required", name: "required", protectedBy: "required" } satisfies Record<
    keyof ProtectedFinding["records"][number],
    Presence
  >,
};
const ACTIONS = { create: true, update: true, delete: true } satisfies Record<PlannedChange["action"], true>;
const RULES = {
  max_delete_percent: true,
  prune_to_empty: true,
  max_update_percent: true,
  protected: true,
} satisfies Record<GuardViolation["rule"], true>;

interface SchemaObject {
  properties?: Record<string, SchemaObject>;
  required?: string[];
  enum?: unknown[];
  description?: string;
  $ref?: string;
  definitions?: Record<string, SchemaObject>;
  propertyNames?: SchemaObject;
}

const schema = readJsonFileSchema("plan") as SchemaObject;

function definition(name: string): SchemaObject {
  const found = name === "" ? schema : schema.definitions?.[name];
  if (!found) throw new Error(`no definition ${name}`);
  return found;
}

describe("plan schema and Plan type", () => {
  it("list the same properties, required alike", () => {
    for (const [name, keys] of Object.entries(KEYS)) {
      const object = definition(name);
      const entries = Object.entries(keys as Record<string, Presence>);
      expect(Object.keys(object.properties ?? {}).sort(), name).toEqual(entries.map(([key]) => key).sort());
      expect([...(object.required ?? [])].sort(), name).toEqual(
        entries
          .filter(([, presence]) => presence === "required")
          .map(([key]) => key)
          .sort(),
      );
    }
  });

  it("allow the same values for actions, families, rules and fields", () => {
    expect(definition("change").properties?.action?.enum).toEqual(Object.keys(ACTIONS));
    expect(definition("guard").properties?.rule?.enum).toEqual(Object.keys(RULES));
    expect(definition("family").enum).toEqual([...FAMILY_NAMES]);
    expect(definition("change").properties?.fields?.propertyNames?.enum).toEqual([...WRITABLE_FIELDS]);
  });

  it("describes every property", () => {
    const undescribed: string[] = [];
    for (const [name, keys] of Object.entries(KEYS)) {
      for (const key of Object.keys(keys)) {
        if (!definition(name).properties?.[key]?.description) undescribed.push(`${name || "plan"}.${key}`);
      }
    }
    expect(undescribed).toEqual([]);
  });

  it("accepts a fully populated Plan, which round-trips unchanged", () => {
    expect(parsePlanFile(serializePlan(FULL_PLAN), "full.json", getPlanValidator())).toStrictEqual(FULL_PLAN);
  });

  it("accepts what the planner produces for any states", () => {
    const names = fc.constantFrom("A", "B", "C", "D", "weird | `name` <x>");
    const record = fc.record({
      id: fc.integer({ min: 1, max: 12 }),
      name: fc.option(names, { nil: null }),
      plugin: fc.integer({ min: 1, max: 3 }),
      order: fc.integer({ min: 1, max: 5 }),
      enabled: fc.boolean(),
      description: fc.option(fc.string(), { nil: null }),
    });
    const config = fc.record({
      name: names,
      plugin: fc.integer({ min: 1, max: 3 }),
      enabled: fc.option(fc.boolean(), { nil: undefined }),
      description: fc.option(fc.option(fc.string(), { nil: null }), { nil: undefined }),
    });
    const family = fc.record({
      project: fc.constantFrom("1", "2"),
      family: fc.constantFrom(...FAMILY_NAMES),
      prune: fc.boolean(),
      configs: fc.uniqueArray(config, { selector: (value) => value.name, maxLength: 4 }),
      records: fc.uniqueArray(record, { selector: (value) => value.id, maxLength: 6 }),
    });
    let planned = 0;
    fc.assert(
      fc.property(
        fc.uniqueArray(family, { selector: (value) => `${value.project}/${value.family}`, maxLength: 4 }),
        (families) => {
          const { plan } = computePlan(
            {
              families: families.map((item) =>
                desiredFamily(
                  item.project,
                  item.family,
                  item.configs.map(({ enabled, description, ...fields }, index) =>
                    desiredConfig({
                      ...fields,
                      order: index + 1,
                      ...(enabled === undefined ? {} : { enabled }),
                      ...(description === undefined ? {} : { description }),
                    }),
                  ),
                  { prune: item.prune },
                ),
              ),
            },
            {
              families: families.map((item) => ({
                project: item.project,
                family: item.family,
                records: item.records.map((fields): PluginConfigRecord => remoteRecord(fields)),
              })),
            },
          );
          if (!plan) return;
          planned += 1;
          expect(parsePlanFile(serializePlan(plan), "plan.json", getPlanValidator())).toStrictEqual(plan);
        },
      ),
      { numRuns: 300 },
    );
    expect(planned).toBeGreaterThan(50);
  });
});

describe("serializePlan and parsePlanFile", () => {
  it("write pretty JSON without `from` on creates, which renderJson prints too", () => {
    const plan = buildRepresentativePlan();
    const text = serializePlan(plan);
    expect(renderJson(plan)).toBe(text);
    expect(text.endsWith("}\n")).toBe(true);
    const document = JSON.parse(text) as { changes: { action: string; fields: Record<string, object> }[] };
    const create = document.changes.find((change) => change.action === "create");
    expect(create?.fields.plugin).toEqual({ to: 2 });
    expect(parsePlanFile(text, "plan.json", getPlanValidator())).toStrictEqual(plan);
  });

  const valid = () => JSON.parse(serializePlan(FULL_PLAN)) as Record<string, unknown> & typeof FULL_PLAN;

  function rejection(text: string): string {
    try {
      parsePlanFile(text, "saved-plan.json", getPlanValidator());
    } catch (error) {
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).code).toBe("plan_file_invalid");
      return (error as Error).message;
    }
    throw new Error("expected the plan to be refused");
  }

  it("refuse garbage and foreign documents, naming the file", () => {
    expect(rejection("{not json")).toMatch(
      /^saved-plan\.json is not a pcsync plan: it is not valid JSON \(.+\)\./,
    );
    expect(rejection("[1, 2]")).toMatch(
      /^saved-plan\.json is not a pcsync plan: it has no "format": "pcsync-plan"/,
    );
    expect(rejection(JSON.stringify({ ...valid(), format: "terraform" }))).toContain("is not a pcsync plan");
    expect(rejection("")).toContain("not valid JSON");
  });

  it("refuse other versions, saying which", () => {
    expect(rejection(JSON.stringify({ ...valid(), version: 3 }))).toBe(
      "saved-plan.json is a version 3 plan; this pcsync reads version 2 plans only. Plan again with this pcsync: `pcsync plan --out saved-plan.json`.",
    );
    // Version 1 plans worded their guards; version 2 keeps them as data.
    expect(rejection(JSON.stringify({ ...valid(), version: 1 }))).toBe(
      "saved-plan.json is a version 1 plan, made by an older pcsync; this pcsync reads version 2 plans only. Plan again with this pcsync: `pcsync plan --out saved-plan.json`.",
    );
  });

  it("refuse wrong types, unknown keys and broken invariants at the first bad path", () => {
    const cases: [(plan: ReturnType<typeof valid>) => void, string][] = [
      [(plan) => Object.assign(plan.summary, { create: "1" }), "summary.create must be integer"],
      [(plan) => Object.assign(plan, { extra: true }), 'the plan has an unknown property "extra"'],
      [(plan) => Object.assign(plan.changes[0] ?? {}, { id: "x" }), "changes[0].id must be null or integer"],
      [(plan) => Object.assign(plan.changes[0] ?? {}, { id: 5 }), "changes[0].id must be null"],
      [
        (plan) => Object.assign(plan.changes[2] ?? {}, { fields: { plugin: { from: 1, to: 2 } } }),
        "changes[2].fields must be empty",
      ],
      [
        (plan) => Object.assign(plan.changes[2] ?? {}, { source: "nowhere" }),
        "changes[2].source must match pattern",
      ],
      [
        (plan) => Object.assign(plan.changes[1] ?? {}, { family: "plugins" }),
        "changes[1].family must be one of",
      ],
      [
        (plan) => Reflect.deleteProperty(plan.changes[0] ?? {}, "source"),
        'changes[0] lacks the required property "source"',
      ],
      [
        (plan) => Object.assign(plan.changes[1]?.fields ?? {}, { colour: { from: 1, to: 2 } }),
        'changes[1].fields has an unknown key "colour"',
      ],
      [
        (plan) => Object.assign(plan.changes[0]?.fields.plugin ?? {}, { from: 1 }),
        "changes[0].fields.plugin.from is not allowed here",
      ],
      [
        (plan) => Reflect.deleteProperty(plan.changes[1]?.fields.deleted ?? {}, "from"),
        'changes[1].fields.deleted lacks the required property "from"',
      ],
      [
        (plan) => Object.assign(plan.fingerprints, { "1/plugin_configs/x": "ab" }),
        'fingerprints has an unknown key "1/plugin_configs/x"',
      ],
      [
        (plan) => Object.assign(plan.reorders[0] ?? {}, { moves: [] }),
        "reorders[0].moves must NOT have fewer than 1 items",
      ],
      [(plan) => Object.assign(plan.summary, { delete: 5 }), "summary.delete is 5 but the plan holds 1"],
    ];
    for (const [breakPlan, message] of cases) {
      const plan = valid();
      breakPlan(plan);
      const refused = rejection(JSON.stringify(plan));
      expect(refused).toMatch(/^saved-plan\.json is not a valid pcsync plan: /);
      expect(refused).toContain(message);
      expect(refused).toContain("`pcsync plan --out saved-plan.json`");
    }
  });
});
