// The planner's safety controls: protected records, ignored fields, `fields: all`, `deleted: true`,
// the update guard and targeting. Pure: desired and current state in, plan out.

import { describe, expect, it } from "vitest";
import type { DesiredFamily } from "../../src/manifest/types.js";
import { computePlan, type PlanOptions } from "../../src/plan/compute-plan.js";
import { recheckProtection } from "../../src/plan/protect.js";
import { recomputeGuards } from "../../src/plan/recompute-guards.js";
import type { Plan } from "../../src/plan/types.js";
import { describeGuard } from "../../src/render/guard-message.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";

/** A guard in the words pcsync shows it, what was found first; "" for none. */
const words = (guard: Parameters<typeof describeGuard>[0] | undefined): string =>
  guard === undefined ? "" : describeGuard(guard, { forced: true });

const PC = "plugin_configs" as const;
const AT = { file: "pcsync.yaml", line: 4, col: 7 };

function planOf(family: DesiredFamily, records: PluginConfigRecord[], options: PlanOptions = {}): Plan {
  const { plan, errors } = computePlan(
    { families: [family] },
    { families: [{ project: "1", family: PC, records }] },
    options,
  );
  expect(errors).toEqual([]);
  if (plan === undefined) throw new Error("no plan");
  return plan;
}

/** `count` records named R1..Rn at orders 1..n, enabled. */
function records(count: number): PluginConfigRecord[] {
  return Array.from({ length: count }, (_, index) =>
    remoteRecord({ id: 100 + index, name: `R${index + 1}`, order: index + 1, enabled: true }),
  );
}

/** The configs that keep those records as they are. */
function keeping(count: number, changed: (index: number) => boolean = () => false) {
  return Array.from({ length: count }, (_, index) =>
    desiredConfig({ name: `R${index + 1}`, order: index + 1, enabled: !changed(index) }),
  );
}

describe("protected records", () => {
  it("refuse a prune of a record a family glob protects, even after its config left the manifest", () => {
    const family = {
      ...desiredFamily("1", PC, keeping(2), { prune: true }),
      protect: [{ pattern: "Legacy *", source: AT }],
    };
    const plan = planOf(family, [...records(2), remoteRecord({ id: 7, name: "Legacy export", order: 3 })]);
    expect(plan.changes.map((change) => change.action)).toEqual(["delete"]);
    expect(plan.guards).toEqual([expect.objectContaining({ rule: "protected", project: "1", family: PC })]);
    expect(words(plan.guards[0])).toContain(
      '"Legacy export" (id 7, protected by "Legacy *" at pcsync.yaml:4)',
    );
    expect(plan.families[0]?.protect).toEqual([{ pattern: "Legacy *", source: "pcsync.yaml:4" }]);
    // --allow-destroy lifts it, by name or glob; a glob of other names does not.
    expect(
      planOf(family, [remoteRecord({ id: 7, name: "Legacy export" })], { allowDestroy: ["Legacy*"] }).guards,
    ).toEqual([]);
    expect(
      planOf(family, [remoteRecord({ id: 7, name: "Legacy export" })], { allowDestroy: ["Legacy"] }).guards,
    ).toHaveLength(1);
  });

  it("refuse `deleted: true` on a config that says `protect: true`, also when pinned by id under another name", () => {
    const config = desiredConfig({ name: "Keep", deleted: true, protect: true }, { id: 5 });
    const plan = planOf(desiredFamily("1", PC, [config]), [remoteRecord({ id: 5, name: "Old name" })]);
    expect(plan.changes).toEqual([expect.objectContaining({ action: "delete", id: 5, name: "Old name" })]);
    expect(plan.guards.map((guard) => guard.rule)).toEqual(["protected"]);
  });

  it("are checked again against the names the service shows: a delete added to a saved plan by hand", () => {
    const config = desiredConfig({ name: "Keep", protect: true });
    const plan = planOf(desiredFamily("1", PC, [config]), [remoteRecord({ id: 5, name: "Keep" })]);
    expect(plan.changes).toEqual([]);
    const edited: Plan = {
      ...plan,
      changes: [
        {
          action: "delete",
          project: "1",
          family: PC,
          name: "Something else",
          id: 5,
          fields: {},
          source: "x:1",
        },
      ],
    };
    const current = {
      families: [{ project: "1", family: PC, records: [remoteRecord({ id: 5, name: "Keep" })] }],
    };
    const guards = recheckProtection(edited, current, []);
    expect(guards).toHaveLength(1);
    expect(words(guards[0])).toContain('"Keep" (id 5');
    expect(recheckProtection(edited, current, ["Keep"])).toEqual([]);
  });

  it("`protect: true` protects its config's name, where a * is a *, not a glob", () => {
    const config = desiredConfig({ name: "Team * Filter", protect: true });
    const family = desiredFamily("1", PC, [config], { prune: true });
    const remote = [
      remoteRecord({ id: 1, name: "Team * Filter", order: 1 }),
      remoteRecord({ id: 2, name: "Team X Filter", order: 2 }),
    ];
    const plan = planOf(family, remote, { maxDeletePercent: 100 });
    expect(plan.changes).toEqual([expect.objectContaining({ action: "delete", id: 2 })]);
    expect(plan.guards.filter((guard) => guard.rule === "protected")).toEqual([]);
    // Its own record (as the identity rule sees the name) stays protected.
    const gone = desiredConfig({ name: " Team * Filter", deleted: true, protect: true });
    const refused = planOf(desiredFamily("1", PC, [gone]), remote);
    expect(refused.guards.map((guard) => guard.rule)).toEqual(["protected"]);
    expect(words(refused.guards[0])).toContain('"Team * Filter" (id 1');
  });

  it("glob characters other than * stand for themselves", () => {
    const family = {
      ...desiredFamily("1", PC, [], { prune: true }),
      protect: [{ pattern: "a.b (x)?[1]", source: AT }],
    };
    const names = ["a.b (x)?[1]", "aXb (x)?[1]", "a.b (x)[1]"];
    const plan = planOf(
      family,
      names.map((name, index) => remoteRecord({ id: index + 1, name, order: index + 1 })),
      { maxDeletePercent: 100 },
    );
    const protectedGuard = plan.guards.find((guard) => guard.rule === "protected");
    expect(words(protectedGuard)).toContain('"a.b (x)?[1]" (id 1');
    expect(words(protectedGuard)).not.toContain("id 2");
    expect(words(protectedGuard)).not.toContain("id 3");
  });
});

describe("ignored fields", () => {
  it("are never compared once the record exists, and counted per family", () => {
    const config = desiredConfig({
      name: "A",
      enabled: true,
      description: "mine",
      order: 1,
      ignore_fields: ["description", "order"],
    });
    const plan = planOf(desiredFamily("1", PC, [config]), [
      remoteRecord({ id: 1, name: "A", enabled: false, description: "theirs", order: 4 }),
    ]);
    expect(plan.changes).toEqual([
      expect.objectContaining({ action: "update", fields: { enabled: { from: false, to: true } } }),
    ]);
    expect(plan.reorders).toEqual([]);
    expect(plan.families[0]?.ignored).toBe(2);
  });

  it("are still sent on a create", () => {
    const config = desiredConfig({ name: "A", description: "mine", ignore_fields: ["description"] });
    const plan = planOf(desiredFamily("1", PC, [config]), []);
    expect(plan.changes[0]?.fields.description).toEqual({ from: undefined, to: "mine" });
  });
});

describe("fields: all", () => {
  it("manages what a config leaves out, at the service's defaults", () => {
    const family = { ...desiredFamily("1", PC, [desiredConfig({ name: "A" })]), fields: "all" as const };
    const plan = planOf(family, [
      remoteRecord({ id: 1, name: "A", enabled: true, description: "edited", match_action: 4 }),
    ]);
    expect(plan.changes[0]?.fields).toEqual({
      enabled: { from: true, to: false },
      description: { from: "edited", to: null },
      match_action: { from: 4, to: null },
    });
    // `listed`, the default: nothing to do.
    expect(
      planOf(desiredFamily("1", PC, [desiredConfig({ name: "A" })]), [
        remoteRecord({ id: 1, name: "A", enabled: true }),
      ]).changes,
    ).toEqual([]);
  });
});

describe("deleted: true", () => {
  it("deletes the record it matches, and nothing when it is gone", () => {
    const family = desiredFamily("1", PC, [
      desiredConfig({ name: "Old", deleted: true }),
      desiredConfig({ name: "B" }),
    ]);
    expect(
      planOf(family, [remoteRecord({ id: 3, name: "Old" }), remoteRecord({ id: 4, name: "B" })]).changes,
    ).toEqual([expect.objectContaining({ action: "delete", id: 3, name: "Old" })]);
    expect(planOf(family, [remoteRecord({ id: 4, name: "B" })]).changes).toEqual([]);
    // Pinned by id, and gone already: nothing to do, not an error.
    const pinned = desiredFamily("1", PC, [desiredConfig({ name: "Old", deleted: true }, { id: 3 })]);
    expect(planOf(pinned, []).changes).toEqual([]);
  });

  it("leaves the records it deletes out of what the delete guard measures a prune against, before and after they are gone", () => {
    // "Old" is deleted by `deleted: true`, "Stray" by the prune: the family ends empty, by the prune.
    const family = desiredFamily("1", PC, [desiredConfig({ name: "Old", deleted: true })], { prune: true });
    const whole = [remoteRecord({ id: 3, name: "Old" }), remoteRecord({ id: 4, name: "Stray" })];
    const rules = (plan: Plan) => plan.guards.map((guard) => guard.rule);
    // Before, the whole plan passed (2 records, 1 pruned) and the same plan with "Old" deleted
    // already (an apply cut short) was refused: a rollout or an apply run again could not finish.
    expect(rules(planOf(family, whole))).toEqual(["prune_to_empty"]);
    expect(rules(planOf(family, whole.slice(1)))).toEqual(["prune_to_empty"]);
    // Computed again at apply from the records read then, the same.
    const plan = planOf(family, whole, { maxDeletePercent: 100 });
    const again = (records: PluginConfigRecord[]) =>
      recomputeGuards(
        plan,
        { families: [{ project: "1", family: PC, records }] },
        {
          maxDeletePercent: 30,
          maxUpdatePercent: 30,
        },
      ).guards.map((guard) => guard.rule);
    expect(again(whole)).toEqual(["prune_to_empty"]);
    // The share too: of 20 records, 5 deleted by `deleted: true` and 5 pruned is 5 of the 15 left
    // (33%, over 30%), before and after the 5 are gone (before: 5 of 20, 25%, passed, and then 33%).
    const twenty = records(20);
    const share = desiredFamily(
      "1",
      PC,
      [
        ...twenty.slice(0, 5).map((record) => desiredConfig({ name: String(record.name), deleted: true })),
        ...twenty
          .slice(10)
          .map((record) => desiredConfig({ name: String(record.name), order: record.order, enabled: true })),
      ],
      { prune: true },
    );
    expect(rules(planOf(share, twenty))).toEqual(["max_delete_percent"]);
    expect(rules(planOf(share, twenty.slice(5)))).toEqual(["max_delete_percent"]);
  });
});

describe("the update guard", () => {
  it("measures updates against the records the plan leaves, so that it judges a plan cut short after its deletes as it judged it whole", () => {
    // 20 records: 6 pruned, 5 of the 14 kept updated: 5 of 14 (36%), whole and with the prunes done.
    // Before: 5 of 20 (25%) passed whole, then 5 of 14 refused the apply run again.
    const twenty = records(20);
    const family = desiredFamily(
      "1",
      PC,
      twenty
        .slice(6)
        .map((record, index) =>
          desiredConfig({ name: String(record.name), order: record.order, enabled: index >= 5 }),
        ),
      { prune: true },
    );
    const rules = (records: PluginConfigRecord[]) =>
      planOf(family, records, { maxDeletePercent: 100 }).guards.map((guard) => guard.rule);
    expect(rules(twenty)).toEqual(["max_update_percent"]);
    expect(rules(twenty.slice(6))).toEqual(["max_update_percent"]);
    const plan = planOf(family, twenty, { maxDeletePercent: 100, maxUpdatePercent: 100 });
    const again = recomputeGuards(
      plan,
      { families: [{ project: "1", family: PC, records: twenty }] },
      {
        maxDeletePercent: 100,
        maxUpdatePercent: 30,
      },
    );
    expect(again.guards.map((guard) => guard.rule)).toEqual(["max_update_percent"]);
    expect(words(again.guards[0])).toContain("would update 5 of 14 records");
    // Said at the manifest's place, as the planner says it: a saved plan knows its changes' places.
    expect(again.guards[0]?.source).toEqual(
      plan.changes.find((change) => change.action === "update")?.source,
    );
    expect(words(again.guards[0])).not.toContain(`(${PC})`);
  });

  it("allows exactly the share, refuses one more, and leaves families under 10 records alone", () => {
    const at = (updated: number, total = 10) =>
      planOf(
        desiredFamily(
          "1",
          PC,
          keeping(total, (index) => index < updated),
        ),
        records(total),
      ).guards;
    expect(at(3)).toEqual([]);
    expect(at(4)).toEqual([expect.objectContaining({ rule: "max_update_percent" })]);
    expect(words(at(4)[0])).toContain("would update 4 of 10 records (40%, more than 30%)");
    expect(at(9, 9)).toEqual([]);
    const raised = planOf(
      desiredFamily(
        "1",
        PC,
        keeping(10, (index) => index < 5),
      ),
      records(10),
      { maxUpdatePercent: 50 },
    );
    expect(raised.guards).toEqual([]);
  });

  it("does not count an adoption that only writes the owner's mark; one that also changes a field counts", () => {
    const withOwner = (family: DesiredFamily) => {
      const { plan } = computePlan(
        { families: [family], owner: { name: "team-a", source: AT } },
        { families: [{ project: "1", family: PC, records: records(10) }] },
      );
      if (plan === undefined) throw new Error("no plan");
      return plan;
    };
    // A first apply with `owner:` adopts every record of the family: no value changes.
    const adopting = withOwner(desiredFamily("1", PC, keeping(10)));
    expect(adopting.changes).toHaveLength(10);
    expect(adopting.changes.every((change) => change.action === "update" && change.mark?.from === null)).toBe(
      true,
    );
    expect(adopting.guards).toEqual([]);
    const changing = withOwner(
      desiredFamily(
        "1",
        PC,
        keeping(10, (index) => index < 4),
      ),
    );
    expect(changing.guards).toEqual([expect.objectContaining({ rule: "max_update_percent" })]);
    expect(words(changing.guards[0])).toContain("would update 4 of 10 records");
  });

  it("is computed again for a saved plan from the records read at apply, with the limit given then", () => {
    const current = { families: [{ project: "1", family: PC, records: records(10) }] };
    // Made with a higher limit (or edited): the file says no guard.
    const plan = planOf(
      desiredFamily(
        "1",
        PC,
        keeping(10, (index) => index < 4),
      ),
      records(10),
      { maxUpdatePercent: 50 },
    );
    expect(plan.guards).toEqual([]);
    const again = recomputeGuards(plan, current, { maxDeletePercent: 30, maxUpdatePercent: 30 });
    expect(again.guards).toEqual([expect.objectContaining({ rule: "max_update_percent", project: "1" })]);
    expect(words(again.guards[0])).toContain("would update 4 of 10 records (40%, more than 30%)");
    expect(recomputeGuards(plan, current, { maxDeletePercent: 30, maxUpdatePercent: 40 }).guards).toEqual([]);
  });
});

describe("targeting", () => {
  const family = desiredFamily("1", PC, [
    desiredConfig({ name: "GeoIP *1", order: 2, enabled: false }),
    desiredConfig({ name: "Filter", order: 1, enabled: false }),
    desiredConfig({ name: "New", order: 3 }),
  ]);
  const current = [
    remoteRecord({ id: 1, name: "GeoIP *1", order: 1, enabled: true }),
    remoteRecord({ id: 2, name: "Filter", order: 2, enabled: true }),
  ];

  it("plans only the targeted records, says it is partial, and leaves out a reorder that moves others", () => {
    const plan = planOf(family, current, { targets: { target: ["GeoIP *"], exclude: [] } });
    expect(plan.partial).toBe(true);
    expect(plan.targets).toEqual({ target: ["GeoIP *"], exclude: [] });
    expect(plan.changes.map((change) => change.name)).toEqual(["GeoIP *1"]);
    expect(plan.reorders).toEqual([]);
    expect(plan.families[0]?.reorderLeftOut).toBe(true);
    expect(Object.keys(plan.fingerprints)).toEqual(["1/plugin_configs/1"]);
  });

  it("keeps the reorder when every record it moves is targeted; --exclude wins over --target", () => {
    const plan = planOf(family, current, { targets: { target: ["*"], exclude: ["New"] } });
    expect(plan.changes.map((change) => change.name)).toEqual(["GeoIP *1", "Filter"]);
    expect(plan.reorders[0]?.moves.map((move) => move.name)).toEqual(["GeoIP *1", "Filter"]);
    expect(plan.families[0]?.reorderLeftOut).toBeUndefined();
  });

  it("a full plan has no partial mark", () => {
    const plan = planOf(family, current);
    expect(plan.partial).toBeUndefined();
    expect(plan.changes).toHaveLength(3);
  });
});
