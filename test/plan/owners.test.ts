// The planner with `owner:`: marks on writes, adoption, refusal of another owner's record (and
// --takeover), prune of its own marked records only, and a description compared without its mark.

import { describe, expect, it } from "vitest";
import type { DesiredConfig, DesiredState } from "../../src/manifest/types.js";
import { writeMark } from "../../src/owner-mark.js";
import { findOwnerProblems } from "../../src/plan/check-owner-marks.js";
import { computePlan, type PlanOptions } from "../../src/plan/compute-plan.js";
import type { CurrentState } from "../../src/plan/types.js";
import { describeGuard } from "../../src/render/guard-message.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";

/** A guard in the words pcsync shows it, what was found first; "" for none. */
const words = (guard: Parameters<typeof describeGuard>[0] | undefined): string =>
  guard === undefined ? "" : describeGuard(guard, { forced: true });

const PC = "plugin_configs" as const;
const mine = (text: string | null) => writeMark(text, "team-a");
const theirs = (text: string | null) => writeMark(text, "team-b");

function desired(configs: DesiredConfig[], prune = false, owner: string | null = "team-a"): DesiredState {
  return {
    families: [desiredFamily("1", PC, configs, { prune, explicitOrder: true })],
    ...(owner === null ? {} : { owner: { name: owner, source: { file: "pcsync.yaml", line: 2, col: 8 } } }),
  };
}

function current(records: PluginConfigRecord[]): CurrentState {
  return { families: [{ project: "1", family: PC, records }] };
}

const plan = (want: DesiredState, have: PluginConfigRecord[], options: PlanOptions = {}) =>
  computePlan(want, current(have), options);

describe("plans with an owner", () => {
  it("creates with the owner's mark, and carries the owner in the plan", () => {
    const result = plan(desired([desiredConfig({ name: "A", order: 1, description: "text" })]), []);
    expect(result.plan?.owner).toBe("team-a");
    expect(result.plan?.takeover).toBeUndefined();
    expect(result.plan?.changes[0]).toMatchObject({
      action: "create",
      fields: { description: { to: "text" } },
      mark: { owner: "team-a" },
    });
  });

  it("sees no drift where only the mark differs, and compares and shows the text without it", () => {
    const record = remoteRecord({ id: 5, name: "A", order: 1, description: mine("text ") });
    expect(
      plan(desired([desiredConfig({ name: "A", order: 1, description: "text " })]), [record]).plan?.changes,
    ).toEqual([]);
    const changed = plan(desired([desiredConfig({ name: "A", order: 1, description: "new" })]), [record]);
    expect(changed.plan?.changes[0]).toMatchObject({
      action: "update",
      fields: { description: { from: "text ", to: "new" } },
      mark: { owner: "team-a" },
    });
    expect(changed.plan?.changes[0]?.mark?.from).toBeUndefined();
    // A field other than the description leaves the description, and so the mark, alone.
    const enabled = plan(desired([desiredConfig({ name: "A", order: 1, enabled: true })]), [record]);
    expect(enabled.plan?.changes[0]).toEqual(
      expect.objectContaining({ fields: { enabled: { from: false, to: true } } }),
    );
    expect(enabled.plan?.changes[0]?.mark).toBeUndefined();
  });

  it("adopts a matching record with no mark, keeping its description unless the manifest sets it", () => {
    const record = remoteRecord({ id: 5, name: "A", order: 1, description: "hand-written" });
    const adopted = plan(desired([desiredConfig({ name: "A", order: 1 })]), [record]);
    expect(adopted.errors).toEqual([]);
    expect(adopted.plan?.changes).toEqual([
      expect.objectContaining({
        action: "update",
        id: 5,
        fields: {},
        mark: { owner: "team-a", from: null, keep: "hand-written" },
      }),
    ]);
    const managed = plan(desired([desiredConfig({ name: "A", order: 1, description: null })]), [
      remoteRecord({ id: 5, name: "A", order: 1, description: null }),
    ]);
    expect(managed.plan?.changes[0]?.mark).toEqual({ owner: "team-a", from: null, keep: null });
  });

  it("refuses a config that matches another owner's record, naming that owner; --takeover takes it", () => {
    const record = remoteRecord({ id: 5, name: "A", order: 1, description: theirs("theirs") });
    const refused = plan(desired([desiredConfig({ name: "A", order: 1 })]), [record]);
    expect(refused.plan).toBeUndefined();
    expect(refused.errors).toEqual([
      expect.objectContaining({
        refused: true,
        message: expect.stringContaining('which owner "team-b" manages'),
      }),
    ]);
    expect(refused.errors[0]?.message).toContain("--takeover");
    const taken = plan(desired([desiredConfig({ name: "A", order: 1 })]), [record], { takeover: true });
    expect(taken.plan?.takeover).toBe(true);
    expect(taken.plan?.changes[0]?.mark).toEqual({ owner: "team-a", from: "team-b", keep: "theirs" });
  });

  it("as watch plans (refuseFamilyOnly), sets the refusal apart and still makes the plan", () => {
    const record = remoteRecord({ id: 5, name: "A", order: 1, description: theirs("theirs") });
    const watched = plan(desired([desiredConfig({ name: "A", order: 1 })]), [record], {
      refuseFamilyOnly: true,
    });
    expect(watched.errors).toEqual([]);
    expect(watched.refused).toEqual([expect.objectContaining({ project: "1", family: PC, refused: true })]);
    expect(watched.plan?.families).toEqual([expect.objectContaining({ project: "1", family: PC })]);
  });

  it("refuses `deleted: true` on another owner's record as any write, and deletes its own or an unmarked one", () => {
    const record = remoteRecord({ id: 5, name: "A", order: 1, description: theirs("theirs") });
    const gone = desiredConfig({ name: "A", deleted: true });
    const refused = plan(desired([gone]), [record]);
    expect(refused.plan).toBeUndefined();
    expect(refused.errors).toEqual([
      expect.objectContaining({
        refused: true,
        message: expect.stringContaining('which owner "team-b" manages'),
      }),
    ]);
    expect(plan(desired([gone]), [record], { takeover: true }).plan?.changes).toEqual([
      expect.objectContaining({ action: "delete", id: 5 }),
    ]);
    for (const description of [mine("ours"), null]) {
      const own = remoteRecord({ id: 6, name: "A", order: 1, description });
      expect(plan(desired([gone]), [own]).plan?.changes).toEqual([
        expect.objectContaining({ action: "delete", id: 6 }),
      ]);
    }
  });

  it("adopting a record whose description the service fills with the plugin's own keeps none under the mark", () => {
    // posthog-2024 shows the plugin's description where a record has none: not the record's to keep.
    const pluginInfo = { name: "S3 Export", description: "Export events to S3." };
    const filled = remoteRecord({
      id: 5,
      name: "A",
      order: 1,
      description: "Export events to S3.",
      plugin_info: pluginInfo,
    });
    const adopted = plan(desired([desiredConfig({ name: "A", order: 1, enabled: true })]), [filled]);
    expect(adopted.plan?.changes[0]?.mark).toEqual({ owner: "team-a", from: null, keep: null });
    const own = remoteRecord({
      id: 5,
      name: "A",
      order: 1,
      description: "Its own text",
      plugin_info: pluginInfo,
    });
    const kept = plan(desired([desiredConfig({ name: "A", order: 1, enabled: true })]), [own]);
    expect(kept.plan?.changes[0]?.mark).toEqual({ owner: "team-a", from: null, keep: "Its own text" });
  });

  it("prunes only records with its own mark, and says how many it left alone and why", () => {
    const records = [
      remoteRecord({ id: 1, name: "Kept", order: 1, description: mine(null) }),
      remoteRecord({ id: 2, name: "Old mine", order: 2, description: mine("x") }),
      remoteRecord({ id: 3, name: "Hand-made", order: 3, description: "no mark" }),
      remoteRecord({ id: 4, name: "Other team", order: 4, description: theirs(null) }),
      remoteRecord({ id: 5, name: "Forged-looking", order: 5, description: "x [pcsync owner=team-a]" }),
    ];
    const result = plan(desired([desiredConfig({ name: "Kept", order: 1 })], true), records);
    expect(result.plan?.changes.map((change) => [change.action, change.id])).toEqual([["delete", 2]]);
    expect(result.plan?.families[0]?.pruneKept).toEqual({ unmarked: 2, otherOwners: 1 });
    expect(result.plan?.families[0]?.unmanaged.map((record) => [record.id, record.owner])).toEqual([
      [3, undefined],
      [4, "team-b"],
      [5, undefined],
    ]);
    // The delete guard counts the owner's records only: deleting 1 of 2 is 50%.
    expect(result.plan?.guards).toEqual([]);
  });

  it("takes a well-formed mark forged on a record as the owner's (the trust limit), and guards a mass of them", () => {
    const own = [1, 2, 3, 4, 5].map((id) =>
      remoteRecord({ id, name: `Own ${id}`, order: id, description: mine(`text ${id}`) }),
    );
    const forged = [6, 7, 8, 9, 10, 11].map((id) =>
      remoteRecord({
        id,
        name: `Someone's ${id}`,
        order: id,
        description: `theirs ${id}\n\n[pcsync owner=team-a]`,
      }),
    );
    const configs = own.map((record) => desiredConfig({ name: record.name ?? "", order: record.order }));
    const one = plan(desired(configs, true), [...own, ...forged.slice(0, 1)]);
    expect(one.plan?.changes.map((change) => [change.action, change.id])).toEqual([["delete", 6]]);
    // Six of eleven records in the owner's scope: past the delete guard's 30%, refused without --force.
    const many = plan(desired(configs, true), [...own, ...forged]);
    expect(many.plan?.guards).toEqual([
      expect.objectContaining({
        rule: "max_delete_percent",
        owned: 11,
        deletes: 6,
        limitPercent: 30,
        owner: "team-a",
      }),
    ]);
    expect(words(many.plan?.guards[0])).toBe(
      'project 1 plugin_configs: prune would delete 6 of 11 records of owner "team-a" (55%, more than 30%) (pcsync.yaml:3).',
    );
    // Pruning all of its own records is pruning its part of the family to nothing.
    const none = plan(desired([], true), own.slice(0, 2));
    expect(words(none.plan?.guards[0])).toBe(
      'project 1 plugin_configs: prune would delete all 2 records of owner "team-a" and leave the owner\'s part of the family empty (pcsync.yaml:3).',
    );
  });

  it("without an owner, plans as before: marks are stripped for comparison only", () => {
    const records = [
      remoteRecord({ id: 1, name: "A", order: 1, description: theirs("same") }),
      remoteRecord({ id: 2, name: "B", order: 2, description: theirs(null) }),
    ];
    const result = plan(
      desired([desiredConfig({ name: "A", order: 1, description: "same" })], true, null),
      records,
    );
    expect(result.errors).toEqual([]);
    expect(result.plan?.owner).toBeUndefined();
    expect(result.plan?.changes).toEqual([expect.objectContaining({ action: "delete", id: 2 })]);
    expect(result.plan?.changes[0]?.mark).toBeUndefined();
    expect(result.plan?.families[0]?.pruneKept).toBeUndefined();
    expect(result.plan?.families[0]?.unmanaged).toEqual([]);
  });
});

describe("apply's second look at the owner rules", () => {
  const want = desired([desiredConfig({ name: "A", order: 1, enabled: true })], true);
  const records = [
    remoteRecord({ id: 1, name: "A", order: 1, description: "unmarked" }),
    remoteRecord({ id: 2, name: "Gone", order: 2, description: mine(null) }),
  ];
  const made = plan(want, records).plan;
  if (made === undefined) throw new Error("no plan");

  it("accepts the plan on the state it was made from", () => {
    expect(findOwnerProblems(made, current(records))).toEqual([]);
  });

  it("refuses a delete of a record that no longer carries the owner's mark, and an adoption of another's", () => {
    const moved = [
      remoteRecord({ id: 1, name: "A", order: 1, description: theirs("unmarked") }),
      remoteRecord({ id: 2, name: "Gone", order: 2, description: theirs(null) }),
    ];
    expect(findOwnerProblems(made, current(moved))).toEqual([
      'record 1 ("A") in project 1 plugin_configs: it carries the mark of owner "team-b", and the plan does not take over it for owner "team-a"',
      'record 2 ("Gone") in project 1 plugin_configs: prune deletes only records with the mark of owner "team-a", and it carries the mark of owner "team-b"',
    ]);
  });

  it("refuses a hand-edited plan: another owner in a mark, a takeover without --takeover, a delete added", () => {
    const other = remoteRecord({ id: 7, name: "Theirs", order: 7, description: theirs(null) });
    const edited = {
      ...made,
      changes: [
        ...made.changes.map((change) =>
          change.mark ? { ...change, mark: { ...change.mark, from: "team-b" } } : change,
        ),
        {
          action: "delete" as const,
          project: "1",
          family: PC,
          name: "Theirs",
          id: 7,
          fields: {},
          source: "x:1",
        },
      ],
    };
    const state = current([
      remoteRecord({ id: 1, name: "A", order: 1, description: theirs("unmarked") }),
      remoteRecord({ id: 2, name: "Gone", order: 2, description: mine(null) }),
      other,
    ]);
    expect(findOwnerProblems(edited, state)).toEqual([
      'record 1 ("A") in project 1 plugin_configs: it carries the mark of owner "team-b": taking it over needs a plan made with --takeover',
      'record 7 ("Theirs") in project 1 plugin_configs: prune deletes only records with the mark of owner "team-a", and it carries the mark of owner "team-b"',
    ]);
    // A delete `deleted: true` asks for: of an unmarked record, as the planner makes it; of another
    // owner's, only in a plan made with --takeover.
    const unmarked = remoteRecord({ id: 8, name: "Loose", order: 8, description: "no mark" });
    const named = (record: typeof other) => ({
      ...made,
      changes: [
        {
          action: "delete" as const,
          project: "1",
          family: PC,
          name: record.name,
          id: record.id,
          fields: {},
          explicit: true as const,
          source: "x:2",
        },
      ],
      reorders: [],
    });
    expect(findOwnerProblems(named(unmarked), current([unmarked]))).toEqual([]);
    expect(findOwnerProblems(named(other), current([other]))).toEqual([
      'record 7 ("Theirs") in project 1 plugin_configs: it carries the mark of owner "team-b": deleting it (deleted: true) needs a plan made with --takeover',
    ]);
    expect(findOwnerProblems({ ...named(other), takeover: true }, current([other]))).toEqual([]);
    const { owner: _owner, ...ownerless } = made;
    expect(findOwnerProblems(ownerless, current(records))).toEqual([
      'record 1 ("A") in project 1 plugin_configs: the change writes an owner mark, but the plan names no owner',
    ]);
  });
});

describe("two owners' records of one name", () => {
  it("each owner claims its own, and leaves the other's alone", () => {
    const records = [
      remoteRecord({ id: 1, name: "A", order: 1, description: theirs(null) }),
      remoteRecord({ id: 2, name: "A", order: 1, description: mine("text") }),
    ];
    const result = plan(
      desired([desiredConfig({ name: "A", order: 1, description: "text" })], true),
      records,
    );
    expect(result.errors).toEqual([]);
    expect(result.plan?.changes).toEqual([]);
    expect(result.plan?.families[0]?.unmanaged.map((record) => [record.id, record.owner])).toEqual([
      [1, "team-b"],
    ]);
    // Without a record of its own among them, the name stays ambiguous.
    const unowned = plan(desired([desiredConfig({ name: "A", order: 1 })], true, "team-c"), records);
    expect(unowned.errors[0]?.message).toContain('2 records in project 1 plugin_configs are named "A"');
  });
});
