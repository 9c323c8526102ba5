// Property: the safety guards judge a plan the same once part of it is done, with an owner or without. Whatever part of a
// plan's deletes (a prune's, or `deleted: true`'s) and updates an apply made before it was cut
// short, planning again from the records it left raises no guard the whole plan did not: an apply
// run again, a resume or a rollout's next run can always finish what the first was allowed to start.
// Also computed again at apply (recompute-guards.ts), from the records read then.

import { describe, expect, it } from "vitest";
import { writeMark } from "../../src/owner-mark.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import { recomputeGuards } from "../../src/plan/recompute-guards.js";
import type { GuardViolation, Plan } from "../../src/plan/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { PC } from "../support/families.js";
import { fc } from "../support/fast-check.js";

const LIMITS = { maxDeletePercent: 30, maxUpdatePercent: 30 };

const OWNER = "team-a";

/** 0 to 24 records named r0.. (unique), some enabled, some carrying the owner's mark or another's. */
const recordsArb = fc
  .array(fc.record({ on: fc.boolean(), mark: fc.constantFrom(null, OWNER, "team-b") }), { maxLength: 24 })
  .map((drawn) =>
    drawn.map(({ on, mark }, index) =>
      remoteRecord({
        id: 100 + index,
        name: `r${index}`,
        order: index + 1,
        enabled: on,
        description: mark === null ? null : writeMark(null, mark),
      }),
    ),
  );

/** For each record: left out (pruned, if prune), kept as it is, kept enabled, or `deleted: true`. */
const fateArb = fc.constantFrom("omit", "keep", "enable", "delete");

const caseArb = recordsArb.chain((records) =>
  fc.record({
    records: fc.constant(records),
    fates: fc.array(fateArb, { minLength: records.length, maxLength: records.length }),
    prune: fc.boolean(),
    owned: fc.boolean(),
    /** Which of the plan's deletes and updates the cut-short apply made. */
    done: fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
  }),
);

function desiredOf(
  records: readonly PluginConfigRecord[],
  fates: readonly string[],
  prune: boolean,
  owned: boolean,
) {
  const configs = records.flatMap((record, index) => {
    const fate = fates[index];
    const name = String(record.name);
    if (fate === "omit") return [];
    if (fate === "delete") return [desiredConfig({ name, deleted: true })];
    return [desiredConfig({ name, order: record.order, enabled: fate === "enable" ? true : record.enabled })];
  });
  const families = [desiredFamily("1", PC, configs, { prune })];
  return owned
    ? { families, owner: { name: OWNER, source: { file: "pcsync.yaml", line: 2, col: 8 } } }
    : { families };
}

/** The plan, or what refused it (a config that matches another owner's record). */
function planOf(desired: ReturnType<typeof desiredOf>, records: PluginConfigRecord[]): Plan | string {
  const { plan, errors } = computePlan(
    desired,
    { families: [{ project: "1", family: PC, records }] },
    LIMITS,
  );
  return plan ?? errors.map((error) => error.message).join("; ");
}

/** The records once the chosen deletes and updates of `plan` are made. */
function applyInPart(plan: Plan, records: readonly PluginConfigRecord[], done: readonly boolean[]) {
  let left = [...records];
  plan.changes.forEach((change, index) => {
    if (done[index % done.length] !== true || change.id === null) return;
    if (change.action === "delete") left = left.filter((record) => record.id !== change.id);
    if (change.action === "update")
      left = left.map((record) => {
        if (record.id !== change.id) return record;
        const written = Object.fromEntries(
          Object.entries(change.fields).map(([field, { to }]) => [field, to]),
        );
        return { ...record, ...written };
      });
  });
  return left;
}

const rulesOf = (guards: readonly { rule: string }[]) => new Set(guards.map((guard) => guard.rule));

describe("the safety guards of a plan applied in part", () => {
  it("raise nothing the whole plan did not, planned again or computed again at apply", () => {
    fc.assert(
      fc.property(caseArb, ({ records, fates, prune, owned, done }) => {
        const desired = desiredOf(records, fates, prune, owned);
        const whole = planOf(desired, records);
        fc.pre(typeof whole !== "string");
        if (typeof whole === "string") return;
        const allowed = rulesOf(whole.guards);
        // The planner and apply's check count alike: the same guards from the same records.
        const atApply = recomputeGuards(whole, { families: [{ project: "1", family: PC, records }] }, LIMITS);
        expect([...rulesOf(atApply.guards)].sort(), "the whole plan at apply").toEqual(
          [...allowed].filter((rule) => rule !== "protected").sort(),
        );
        // With the same counts, so that the words each one prints agree (where in the manifest it
        // points may differ: the family's line, or its first change's).
        const counts = (guards: readonly GuardViolation[]) =>
          guards
            .filter((guard) => guard.rule !== "protected")
            .map(({ source: _, ...guard }) => guard)
            .sort((a, b) => a.rule.localeCompare(b.rule));
        expect(counts(atApply.guards), "the whole plan's counts at apply").toEqual(counts(whole.guards));
        const left = applyInPart(whole, records, done);
        const again = planOf(desired, left);
        // A plan refused whole is not applied; one that was is not refused once applied in part.
        if (typeof again === "string") throw new Error(`planned again: refused: ${again}`);
        for (const rule of rulesOf(again.guards)) expect(allowed, `planned again: ${rule}`).toContain(rule);
        const rechecked = recomputeGuards(
          again,
          { families: [{ project: "1", family: PC, records: left }] },
          LIMITS,
        );
        for (const rule of rulesOf(rechecked.guards)) expect(allowed, `at apply: ${rule}`).toContain(rule);
      }),
    );
  });
});
