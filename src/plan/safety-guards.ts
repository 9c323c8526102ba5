// The safety guards of a plan: a prune may not empty a family, nor delete more than a share of one
// of 10 or more records; a plan may not update more than a share of such a family (octoDNS's
// MAX_SAFE_UPDATE_PCENT); protected records (protect.ts). The planner finds them in numbers, which
// the plan keeps; render/guard-message.ts words them.

import type { GuardViolation, MaxUpdatePercentFinding, PlannedChange, PruneToEmptyFinding } from "./types.js";

/** A family smaller than this may lose any share of its records, though not all of them. */
const MIN_RECORDS_FOR_SHARE = 10;

/**
 * One family's prune: its records the manifest owns, and what the plan creates and deletes there.
 * With `owner`, `owned` counts that owner's own records, and the guard names it.
 */
export type PruneCounts = Omit<PruneToEmptyFinding, "rule"> & { creates: number };

/**
 * How many of `records` (a family's own, as the delete guard counts them) are left for a prune to
 * act on: those a `deleted: true` among `changes` deletes are not, as they go whatever the prune
 * does. So a plan whose explicit deletes are done (an apply cut short, a rollout's wave) is judged
 * again as it was whole, the planner's count and apply's check alike.
 */
export function ownedForPrune(records: readonly { id: number }[], changes: readonly PlannedChange[]): number {
  const explicit = new Set(
    changes.flatMap((change) =>
      change.action === "delete" && change.explicit === true && change.id !== null ? [change.id] : [],
    ),
  );
  return records.filter((record) => !explicit.has(record.id)).length;
}

/**
 * How many of `records` (a family's own) are left once `changes` are made, creates aside: what the
 * update guard measures updates against. A plan whose deletes are done (an apply cut short) is so
 * judged again as it was whole.
 */
export function ownedForUpdates(
  records: readonly { id: number }[],
  changes: readonly PlannedChange[],
): number {
  const deleted = new Set(
    changes.flatMap((change) => (change.action === "delete" && change.id !== null ? [change.id] : [])),
  );
  return records.filter((record) => !deleted.has(record.id)).length;
}

/** The guard the prune violates, if any; emptying the family is checked before the share. */
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
 * Whether a change counts for the update guard: an update that changes a field. An adoption (or a
 * `--takeover`) that only adds the owner's mark to a record's description changes none of its
 * values; the first apply of an `owner:` adopts a whole family, and counting that would trip the
 * guard and teach `--force`. An adoption that also changes a field counts.
 */
export function countsAsUpdate(change: PlannedChange): boolean {
  return change.action === "update" && Object.keys(change.fields).length > 0;
}

/** The update guard: more than `maxUpdatePercent` of a family of 10 or more records updated (exactly that share passes). */
export function findUpdateGuard(
  counts: Omit<MaxUpdatePercentFinding, "rule" | "limitPercent">,
  maxUpdatePercent: number,
): MaxUpdatePercentFinding | undefined {
  const { owned, updates } = counts;
  if (owned < MIN_RECORDS_FOR_SHARE || (updates * 100) / owned <= maxUpdatePercent) return undefined;
  return { rule: "max_update_percent", ...counts, limitPercent: maxUpdatePercent };
}

/** Whether --force overrides the guard: every guard but protection, which only --allow-destroy lifts. */
export function isForceable(rule: GuardViolation["rule"]): boolean {
  return rule !== "protected";
}

/** The guards that stop an apply: all of them, or with --force only those it cannot override. */
export function refusingGuards<T extends { rule: GuardViolation["rule"] }>(
  guards: readonly T[],
  force: boolean,
): T[] {
  return guards.filter((guard) => !force || !isForceable(guard.rule));
}
