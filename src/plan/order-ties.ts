// Order ties: records of one family at one order, whose relative order the service does not define
// (its lists break the tie by plugin id). The one home of the rule that plan and export apply.

import { groupBy } from "../group-by.js";
import type { OrderTie, TiedConfig, TiedRecord } from "./types.js";

/** A config of the manifest where the plan leaves it. */
export type PlacedConfig = TiedConfig & { order: number };

/** What a tie means, in the words every warning about one uses. */
export const TIE_EFFECT = "which of them runs first is not defined (the service lists them by plugin id)";

/** The items sharing an order with another, grouped by order, lowest first; each group keeps its input order. */
export function groupTiedOrders<T extends { order: number }>(
  items: readonly T[],
): { order: number; items: T[] }[] {
  return [...groupBy(items, (item) => item.order)]
    .filter(([, group]) => group.length > 1)
    .sort(([a], [b]) => a - b)
    .map(([order, group]) => ({ order, items: group }));
}

/**
 * The orders that configs of the manifest, as the plan leaves them, share with another record: an
 * unmanaged one, or another config where `ignore_fields: [order]` left one of them at an order the
 * manifest does not give it. A tie of configs each at the order the manifest gives it is the
 * manifest's own doing, which its checks warn of before any plan; unmanaged records tied only with
 * each other are not the manifest's business: neither is listed. This is the one rule: a config
 * reaches a tie only through one of these, so no setting of the manifest can hide one.
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
