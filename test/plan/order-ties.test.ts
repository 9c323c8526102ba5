// Order ties with records the manifest does not manage: the plan warns of every order its configs
// share with such a record once applied, and of nothing else (see src/plan/order-ties.ts).

import { describe, expect, it } from "vitest";
import type { DesiredConfig } from "../../src/manifest/types.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { OrderTie } from "../../src/plan/types.js";
import { describeOrderTie } from "../../src/render/describe-plan.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { FE, PC } from "../support/families.js";

/** Names of configs as `name:order` (positional unless given), for short tests. */
function configs(...specs: string[]): DesiredConfig[] {
  return specs.map((spec, index) => {
    const [name = "", order] = spec.split(":");
    return desiredConfig(
      { name, plugin: index + 1, order: order === undefined ? index + 1 : Number(order) },
      { line: 10 + index },
    );
  });
}

function tiesOf(
  desired: DesiredConfig[],
  records: PluginConfigRecord[],
  options: { prune?: boolean; frontend?: PluginConfigRecord[] } = {},
): OrderTie[] | undefined {
  const frontend = options.frontend ?? [];
  const { plan, errors } = computePlan(
    { families: [desiredFamily("1", PC, desired, { prune: options.prune ?? false })] },
    {
      families: [
        { project: "1", family: PC, records: [...records, ...frontend] },
        ...(frontend.length > 0 ? [{ project: "1", family: FE, records: frontend }] : []),
      ],
    },
  );
  expect(errors).toEqual([]);
  return plan?.families[0]?.orderTies;
}

const unmanaged = (id: number, order: number, name = `Hand ${id}`) =>
  remoteRecord({ id, name, plugin: 50 + id, order });

describe("order ties with unmanaged records", () => {
  it("warns of a config created at the order of an unmanaged record", () => {
    expect(tiesOf(configs("New"), [unmanaged(7, 1)])).toEqual([
      {
        order: 1,
        managed: [{ id: null, name: "New", plugin: 1, placed: "create", source: "pcsync.yaml:10" }],
        unmanaged: [{ id: 7, name: "Hand 7", plugin: 57 }],
      },
    ]);
  });

  it("warns at the top and the bottom of the family, and names every record at one order", () => {
    const ties = tiesOf(configs("A", "B", "C"), [unmanaged(7, 1), unmanaged(8, 3), unmanaged(9, 3)]);
    expect(
      ties?.map((tie) => [tie.order, tie.managed.map((c) => c.name), tie.unmanaged.map((r) => r.id)]),
    ).toEqual([
      [1, ["A"], [7]],
      [3, ["C"], [8, 9]],
    ]);
  });

  it("uses explicit orders: a gap holds an unmanaged record without a tie", () => {
    expect(tiesOf(configs("A:10", "B:20"), [unmanaged(7, 15)])).toBeUndefined();
    expect(tiesOf(configs("A:10", "B:20"), [unmanaged(7, 20)])?.map((tie) => tie.order)).toEqual([20]);
  });

  it("warns of a record the plan moves onto an unmanaged record's order", () => {
    const moved = remoteRecord({ id: 3, name: "B", plugin: 2, order: 5 });
    expect(tiesOf(configs("A", "B"), [unmanaged(7, 2), moved])?.[0]?.managed).toEqual([
      { id: 3, name: "B", plugin: 2, placed: "move", source: "pcsync.yaml:11" },
    ]);
  });

  it("warns of a tie that was there before and that the plan keeps", () => {
    const kept = remoteRecord({ id: 3, name: "A", plugin: 1, order: 1 });
    expect(tiesOf(configs("A"), [kept, unmanaged(7, 1)])?.[0]?.managed[0]?.placed).toBe("kept");
  });

  it("says nothing once the plan moves the managed record away from an earlier tie", () => {
    const tied = remoteRecord({ id: 3, name: "A", plugin: 1, order: 2 });
    expect(tiesOf(configs("A:2"), [tied, unmanaged(7, 2)])?.map((tie) => tie.order)).toEqual([2]);
    expect(tiesOf(configs("A"), [tied, unmanaged(7, 2)])).toBeUndefined();
  });

  it("says nothing with prune: the unmanaged records are deleted", () => {
    expect(tiesOf(configs("New"), [unmanaged(7, 1)], { prune: false })).toHaveLength(1);
    expect(tiesOf(configs("New"), [unmanaged(7, 1)], { prune: true })).toBeUndefined();
  });

  it("says nothing of unmanaged records tied only with each other, nor of configs tied only with each other", () => {
    const pair = [unmanaged(7, 4), unmanaged(8, 4)];
    expect(tiesOf(configs("A"), pair)).toBeUndefined();
    expect(tiesOf(configs("A:1", "B:1"), [unmanaged(9, 2)])).toBeUndefined();
    // The same records, once a config joins them, are one tie naming all of them.
    const ties = tiesOf(configs("A:1", "B:1", "C:4"), [...pair, unmanaged(9, 2)]);
    expect(ties?.map((tie) => [tie.order, tie.managed.length, tie.unmanaged.map((r) => r.id)])).toEqual([
      [4, 1, [7, 8]],
    ]);
  });

  it("ignores the frontend apps that plugin_configs lists too (posthog-2024), however they are ordered", () => {
    const banner = remoteRecord({ id: 20, name: "Banner", plugin: 40, order: 1 });
    expect(tiesOf(configs("A"), [unmanaged(7, 1)], { frontend: [banner] })?.[0]?.unmanaged).toEqual([
      { id: 7, name: "Hand 7", plugin: 57 },
    ]);
    expect(tiesOf(configs("A"), [], { frontend: [banner] })).toBeUndefined();
  });

  it("adds orderTies to a family's report only where there is a tie", () => {
    const planFor = (order: number) =>
      computePlan(
        { families: [desiredFamily("1", PC, configs("A"))] },
        { families: [{ project: "1", family: PC, records: [unmanaged(7, order)] }] },
      ).plan;
    expect(Object.keys(planFor(1)?.families[0] ?? {})).toContain("orderTies");
    expect(Object.keys(planFor(2)?.families[0] ?? {})).not.toContain("orderTies");
  });
});

describe("order ties that ignore_fields: [order] leaves", () => {
  /** A config whose order the service keeps: ignore_fields names it. */
  const keeping = (name: string, order: number, line: number) =>
    desiredConfig({ name, plugin: line, order, ignore_fields: ["order"] }, { line });
  const record = (id: number, name: string, order: number) => remoteRecord({ id, name, plugin: 1, order });

  it("warns of two configs the service holds at one order when ignore_fields keeps one there", () => {
    // The manifest gives 1 and 2 (its checks see no tie); the service holds both at 1.
    const ties = tiesOf(
      [desiredConfig({ name: "A", plugin: 1, order: 1 }, { line: 10 }), keeping("B", 2, 11)],
      [record(3, "A", 1), record(4, "B", 1)],
    );
    expect(ties).toEqual([
      {
        order: 1,
        managed: [
          { id: 3, name: "A", plugin: 1, placed: "kept", source: "pcsync.yaml:10" },
          { id: 4, name: "B", plugin: 11, placed: "ignored", source: "pcsync.yaml:11" },
        ],
        unmanaged: [],
      },
    ]);
  });

  it("warns where both keep their order, and where a config is moved onto one kept at its order", () => {
    const both = tiesOf([keeping("A", 1, 10), keeping("B", 2, 11)], [record(3, "A", 5), record(4, "B", 5)]);
    expect(both?.map((tie) => [tie.order, tie.managed.map((c) => c.placed)])).toEqual([
      [5, ["ignored", "ignored"]],
    ]);
    const moved = tiesOf(
      [desiredConfig({ name: "A", plugin: 1, order: 7 }, { line: 10 }), keeping("B", 2, 11)],
      [record(3, "A", 1), record(4, "B", 7)],
    );
    expect(moved?.map((tie) => [tie.order, tie.managed.map((c) => c.placed)])).toEqual([
      [7, ["move", "ignored"]],
    ]);
  });

  it("finds a kept config's tie with an unmanaged record at the service's order, not the manifest's", () => {
    const ties = tiesOf([keeping("A", 1, 10)], [record(3, "A", 4), unmanaged(7, 4), unmanaged(8, 1)]);
    expect(ties?.map((tie) => [tie.order, tie.unmanaged.map((r) => r.id)])).toEqual([[4, [7]]]);
    // The way out it gives is not an order: in the manifest, which ignore_fields would not write.
    const [tie] = ties ?? [];
    expect(tie && describeOrderTie(tie, { maxValueChars: 100 })).toBe(
      '"A" (left here by ignore_fields, id 3) shares order 4 with unmanaged "Hand 7" (id 7): which of them runs first is not defined (the service lists them by plugin id); ignore_fields: [order] leaves "A" at the service\'s order: give it a distinct order on the service, or drop order from its ignore_fields, or manage the record in the manifest (id: 7)',
    );
  });

  it("says nothing where ignore_fields leaves each config at an order of its own, or at the manifest's", () => {
    expect(tiesOf([keeping("A", 1, 10), keeping("B", 2, 11)], [record(3, "A", 4), record(4, "B", 5)])).toBe(
      undefined,
    );
    // At the manifest's orders, shared or not, the tie is the manifest's checks' to warn of.
    expect(tiesOf([keeping("A", 1, 10), keeping("B", 1, 11)], [record(3, "A", 1), record(4, "B", 1)])).toBe(
      undefined,
    );
  });

  it("warns of a config created at the manifest's order where ignore_fields keeps another", () => {
    // Created, B takes the manifest's order 2, where the service keeps A.
    const ties = tiesOf([keeping("A", 1, 10), keeping("B", 2, 11)], [record(3, "A", 2)]);
    expect(ties?.map((tie) => [tie.order, tie.managed.map((c) => c.placed)])).toEqual([
      [2, ["ignored", "create"]],
    ]);
  });
});
