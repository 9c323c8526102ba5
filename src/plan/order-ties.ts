// Order ties: records of one family at one order, whose relative order the service does not define
// (its lists break the tie by plugin id). The one home of the rule that plan and export apply.

import { groupBy } from "../group-by.js";
import type { OrderTie, TiedConfig, TiedRecord } from "./types.js";

export type PlacedConfig = TiedConfig & { order: number };

export const TIE_EFFECT = "which of them runs first is not defined (the service lists them by plugin id)";

/** Groups are lowest order first; each keeps its input order. */
export function groupTiedOrders<T extends { order: number }>(
  items: readonly T[],
): { order: number; items: T[] }[] {
  return [...groupBy(items, (item) => item.order)]
    .filter(([, group]) => group.length > 1)
    .sort(([a], [b]) => a - b)
    .map(([order, group]) => ({ order, items: group }));
}

/**
 * Orders configs share after the plan with an unmanaged record, or with another config where
 * `ignore_fields: [order]` left one off its manifest order. Ties among configs at their manifest
 * orders are the manifest checks' to warn of, ties among unmanaged records nobody's: neither is listed.
 */
export function findOrderTies(
  managed: readonly PlacedConfig[],
  unmanaged: readonly (TiedRecord & { order: number })[],
): OrderTie[] {
  const tagged = [
    ...managed.map((config) => ({ order: config.order, config })),
    ...unmanaged.map((record) => ({ order: record.order, record })),
  ];
  const ties: OrderTie[] = [];
  for (const { order, items } of groupTiedOrders(tagged)) {
    const configs = items.flatMap((item) => ("config" in item ? [item.config] : []));
    const records = items.flatMap((item) => ("record" in item ? [item.record] : []));
    if (configs.length === 0) continue;
    const unseenByChecks = records.length > 0 || configs.some((config) => config.placed === "ignored");
    if (!unseenByChecks) continue;
    ties.push({
      order,
      managed: configs.map(({ id, name, plugin, placed, source }) => ({ id, name, plugin, placed, source })),
      unmanaged: records.map(({ id, name, plugin }) => ({ id, name, plugin })),
    });
  }
  return ties;
}
