// A prune may not empty a family, nor delete more than a share of one of 10 or more records; a plan may
// not update more than a share of one (octoDNS's MAX_SAFE_UPDATE_PCENT). Protection is protect.ts's.

import type { GuardViolation, MaxUpdatePercentFinding, PlannedChange, PruneToEmptyFinding } from "./types.js";

/** A family smaller than this may lose any share of its records, though not all of them. */
const MIN_RECORDS_FOR_SHARE = 10;

/** With `owner`, `owned` counts that owner's own records, and the guard names it. */
export type PruneCounts = Omit<PruneToEmptyFinding, "rule"> & { creates: number };

/**
 * `records` less those a `deleted: true` deletes whatever the prune does: so a plan whose explicit
 * deletes are done (an apply cut short, a rollout's wave) is judged again as it was whole.
 */
export function ownedForPrune(records: readonly { id: number }[], changes: readonly PlannedChange[]): number {
  const explicit = new Set(
    changes.flatMap((change) =>
      change.action === "delete" && change.explicit === true && change.id !== null ? [change.id] : [],
    ),
  );
  return records.filter((record) => !explicit.has(record.id)).length;
}

/** `records` less those `changes` delete, so a plan whose deletes are done is judged again as it was whole. */
export function ownedForUpdates(
  records: readonly { id: number }[],
  changes: readonly PlannedChange[],
): number {
  const deleted = new Set(
    changes.flatMap((change) => (change.action === "delete" && change.id !== null ? [change.id] : [])),
  );
  return records.filter((record) => !deleted.has(record.id)).length;
}

/** Emptying the family is checked before the share. */
export function findGuard(prune: PruneCounts, maxDeletePercent: number): GuardViolation | undefined {
  const { project, family, owned, creates, deletes, source, owner } = prune;
  if (deletes === 0) return undefined;
  const whose = owner === undefined ? {} : { owner };
  if (owned > 0 && owned - deletes + creates === 0) {
    return { rule: "prune_to_empty", project, family, owned, deletes, source, ...whose };
  }
  if (owned >= MIN_RECORDS_FOR_SHARE && (deletes * 100) / owned > maxDeletePercent) {
    return {
      rule: "max_delete_percent",
      project,
      family,
      owned,
      deletes,
      limitPercent: maxDeletePercent,
      source,
      ...whose,
    };
  }
  return undefined;
}

/**
 * An adoption that only adds the owner's mark changes no field and does not count: the first apply of
 * an `owner:` adopts a whole family, and counting that would trip the guard and teach `--force`.
 */
export function countsAsUpdate(change: PlannedChange): boolean {
  return change.action === "update" && Object.keys(change.fields).length > 0;
}

/** Exactly `maxUpdatePercent` passes. */
export function findUpdateGuard(
  counts: Omit<MaxUpdatePercentFinding, "rule" | "limitPercent">,
  maxUpdatePercent: number,
): MaxUpdatePercentFinding | undefined {
  const { owned, updates } = counts;
  if (owned < MIN_RECORDS_FOR_SHARE || (updates * 100) / owned <= maxUpdatePercent) return undefined;
  return { rule: "max_update_percent", ...counts, limitPercent: maxUpdatePercent };
}

/** Only --allow-destroy lifts protection. */
export function isForceable(rule: GuardViolation["rule"]): boolean {
  return rule !== "protected";
}

export function refusingGuards<T extends { rule: GuardViolation["rule"] }>(
  guards: readonly T[],
  force: boolean,
): T[] {
  return guards.filter((guard) => !force || !isForceable(guard.rule));
}
