// A rollback's plan checked for names it would give two live records of one family: what it
// brings back (created again, undeleted) or renames back against what is live, look-alikes too.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findNameClashes } from "../../src/journal/plan-rollback.js";
import type { CurrentState, PlannedChange } from "../../src/plan/types.js";
import { lookAlikeKey } from "../../src/record-name.js";
import { remoteRecord } from "../support/builders.js";

const PC = "plugin_configs" as const;

function state(records: ReturnType<typeof remoteRecord>[]): CurrentState {
  return { families: [{ project: "1", family: PC, records }] };
}

function change(
  action: PlannedChange["action"],
  id: number | null,
  name: string,
  fields: PlannedChange["fields"] = {},
): PlannedChange {
  return { action, project: "1", family: PC, id, name, fields, source: "journal.jsonl:3" };
}

const undelete = (id: number, name: string) =>
  change("update", id, name, { deleted: { from: true, to: false } });

describe("names a rollback would give twice", () => {
  it("refuses bringing back a deleted record whose name a live record holds now, naming both", () => {
    const current = state([remoteRecord({ id: 40, name: "Billing" })]);
    const retrieved = state([remoteRecord({ id: 7, name: "Billing", deleted: true })]);
    const clashes = findNameClashes({ changes: [undelete(7, "Billing")] }, current, retrieved);
    expect(clashes).toHaveLength(1);
    expect(clashes[0]).toContain('record 7 ("Billing") in project 1 plugin_configs');
    expect(clashes[0]).toContain('record 40 ("Billing"), live now');
  });

  it("lets a plugin config share its name with a frontend app that plugin_configs also lists (posthog-2024)", () => {
    const app = remoteRecord({ id: 8, name: "app-banner", plugin: 41 });
    const lists = (frontend: boolean): CurrentState => ({
      families: [
        { project: "1", family: PC, records: [app] },
        ...(frontend
          ? [{ project: "1", family: "pipeline_frontend_apps_configs" as const, records: [app] }]
          : []),
      ],
    });
    const retrieved = state([remoteRecord({ id: 10, name: "app-banner", plugin: 9, deleted: true })]);
    const plan = { changes: [undelete(10, "app-banner")] };
    expect(findNameClashes(plan, lists(true), retrieved)).toEqual([]);
    // Without the frontend apps' list, the record is plugin_configs' own as far as anything shows.
    expect(findNameClashes(plan, lists(false), retrieved)).toHaveLength(1);
  });

  it("treats look-alike names as one: white space at the ends, NFC and NFD", () => {
    for (const taken of ["Billing ", " Billing", "Billing\u00a0"]) {
      const clashes = findNameClashes(
        { changes: [change("create", null, "Billing", { name: { from: undefined, to: "Billing" } })] },
        state([remoteRecord({ id: 41, name: taken })]),
        state([]),
      );
      expect(clashes, JSON.stringify(taken)).toHaveLength(1);
    }
    const nfd = "Cafe\u0301";
    const clashes = findNameClashes(
      { changes: [undelete(8, "Caf\u00e9")] },
      state([remoteRecord({ id: 42, name: nfd })]),
      state([]),
    );
    expect(clashes[0]).toContain(`record 42 (${JSON.stringify(nfd)})`);
  });

  it("lets a name go back where the rollback also frees it, and never counts null names", () => {
    // The run renamed 1 "A" -> "B" and made 2 "A": the rollback deletes 2 and renames 1 back.
    const current = state([remoteRecord({ id: 1, name: "B" }), remoteRecord({ id: 2, name: "A" })]);
    const plan = {
      changes: [change("delete", 2, "A"), change("update", 1, "B", { name: { from: "B", to: "A" } })],
    };
    expect(findNameClashes(plan, current, state([]))).toEqual([]);
    const nulls = state([remoteRecord({ id: 3, name: null })]);
    expect(
      findNameClashes(
        { changes: [undelete(9, "x")] },
        nulls,
        state([remoteRecord({ id: 9, name: null, deleted: true })]),
      ),
    ).toEqual([]);
    // Two live records of one name the rollback does not touch are not its doing.
    const twins = state([remoteRecord({ id: 5, name: "T" }), remoteRecord({ id: 6, name: "T" })]);
    expect(findNameClashes({ changes: [] }, twins, state([]))).toEqual([]);
  });

  it("finds a clash exactly when a brought-back name looks like a live one (property)", () => {
    const name = fc.oneof(
      fc.constantFrom("A", "A ", " A", "\u00c5", "A\u030a", "B", "b"),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(name, fc.array(name, { maxLength: 4 }), (back, live) => {
        const current = state(
          live.map((liveName, index) => remoteRecord({ id: 100 + index, name: liveName })),
        );
        const clashes = findNameClashes(
          { changes: [undelete(1, back)] },
          current,
          state([remoteRecord({ id: 1, name: back, deleted: true })]),
        );
        const expected = live.some((liveName) => lookAlikeKey(liveName) === lookAlikeKey(back));
        expect(clashes.length > 0).toBe(expected);
      }),
    );
  });
});
