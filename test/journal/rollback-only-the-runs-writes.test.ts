// A rollback undoes what the run did, and nothing that others did around it: a field the run never
// sent that changed between its read and its write (the answer shows it) stays as it is now, and a
// run of an owner does not write a record that carries another owner's mark now (claimed since, or
// in a race with the run), unless forced.

import { describe, expect, it } from "vitest";
import { parseJournal } from "../../src/journal/journal-format.js";
import { planRollback } from "../../src/journal/plan-rollback.js";
import { replayJournal } from "../../src/journal/replay-journal.js";
import { writeMark } from "../../src/owner-mark.js";
import type { CurrentState } from "../../src/plan/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { remoteRecord } from "../support/builders.js";
import { JOURNAL_HEADER, journalOf } from "../support/journal-lines.js";

const PC = "plugin_configs" as const;

function image(record: PluginConfigRecord) {
  const { id, plugin, enabled, deleted, order, name, description, match_action } = record;
  return { id, plugin, enabled, deleted, order, name, description, match_action };
}

/** A journal of one write of record 3: what the run read, sent, and the answer it got. */
function journalOfWrite(
  read: PluginConfigRecord,
  send: Record<string, unknown>,
  answer: PluginConfigRecord,
  owner?: string,
) {
  const header = owner === undefined ? JOURNAL_HEADER : { ...JOURNAL_HEADER, owner };
  const intent = {
    type: "intent",
    seq: 1,
    op: "update",
    project: "1",
    family: PC,
    id: 3,
    name: read.name,
    send,
  };
  return parseJournal(
    journalOf(
      header,
      { ...intent, before: [image(read)] },
      { type: "outcome", seq: 1, status: "done", records: [image(answer)] },
    ),
    "j.jsonl",
  );
}

function rollbackOf(journal: ReturnType<typeof journalOfWrite>, now: PluginConfigRecord, force = false) {
  const current: CurrentState = { families: [{ project: "1", family: PC, records: [now] }] };
  return planRollback({
    journal,
    replay: replayJournal(journal),
    current,
    retrieved: { families: [] },
    force,
  });
}

const READ = remoteRecord({ id: 3, name: "Legacy S3", enabled: true, description: "drops $ip", order: 3 });

describe("a rollback undoes only the run's own writes", () => {
  it("never puts back a field the run never sent that someone changed between the run's read and its write", () => {
    // The run disabled the record; someone edited its description just before the write landed.
    const answer = { ...READ, enabled: false, description: "edited by hand" };
    const journal = journalOfWrite(READ, { enabled: false }, answer);
    // Not what the run left: a change by someone else, refused as one made since.
    const { plan, conflicts } = rollbackOf(journal, answer);
    expect(conflicts).toEqual([
      expect.objectContaining({ id: 3, field: "description", now: "edited by hand", left: ["drops $ip"] }),
    ]);
    expect(plan.changes[0]?.fields).toEqual({ enabled: { from: false, to: true } });
    // Forced, the run's own change is undone, and the edit stays.
    expect(rollbackOf(journal, answer, true).plan.changes[0]?.fields).toEqual({
      enabled: { from: false, to: true },
    });
  });

  it("takes from a write's answer only the fields it sent: another field it shows is someone else's change", () => {
    // The run wrote the description, then the order; between the two, someone edited the description.
    const first = { ...READ, description: "v2" };
    const second = { ...READ, description: "edited by hand", order: 9 };
    const intent = (seq: number, send: Record<string, unknown>, before: PluginConfigRecord) => ({
      type: "intent",
      seq,
      op: "update",
      project: "1",
      family: PC,
      id: 3,
      name: READ.name,
      send,
      before: [image(before)],
    });
    const journal = parseJournal(
      journalOf(
        JOURNAL_HEADER,
        intent(1, { description: "v2" }, READ),
        { type: "outcome", seq: 1, status: "done", records: [image(first)] },
        intent(2, { order: 9 }, first),
        { type: "outcome", seq: 2, status: "done", records: [image(second)] },
      ),
      "j.jsonl",
    );
    const { conflicts } = rollbackOf(journal, second);
    expect(conflicts).toEqual([
      expect.objectContaining({ id: 3, field: "description", now: "edited by hand", left: ["v2"] }),
    ]);
  });

  it("still calls a change of a field the run never sent, made after the run, a change since", () => {
    const answer = { ...READ, enabled: false };
    const deletedSince = { ...answer, deleted: true };
    const { plan, conflicts } = rollbackOf(journalOfWrite(READ, { enabled: false }, answer), deletedSince);
    expect(conflicts).toEqual([
      expect.objectContaining({ id: 3, field: "deleted", now: true, left: [false] }),
    ]);
    expect(plan.changes[0]?.fields).toEqual({ enabled: { from: false, to: true } });
  });

  it("brings back a deleted record's enabled with it: the service disables what it deletes", () => {
    const answer = { ...READ, enabled: false, deleted: true };
    const { plan } = rollbackOf(journalOfWrite(READ, { deleted: true }, answer), answer);
    expect(plan.changes[0]?.fields).toEqual({
      enabled: { from: false, to: true },
      deleted: { from: true, to: false },
    });
  });

  it("still puts back each field the run sent, and calls a later change of it a conflict", () => {
    const answer = { ...READ, description: "v2" };
    const journal = journalOfWrite(READ, { description: "v2" }, answer);
    expect(rollbackOf(journal, answer).plan.changes[0]?.fields).toEqual({
      description: { from: "v2", to: "drops $ip" },
    });
    const conflicts = rollbackOf(journal, { ...answer, description: "v3" }).conflicts;
    expect(conflicts).toEqual([expect.objectContaining({ id: 3, field: "description", now: "v3" })]);
  });
});

describe("a rollback of an owner's run and another owner's mark", () => {
  // Owner team-b's run read the record unmarked and deleted it; owner team-a marked it in between.
  const marked = { ...READ, description: writeMark("drops $ip", "team-a") };
  const deleted = { ...marked, enabled: false, deleted: true };

  it("does not write a record another owner marked, and says whose it is", () => {
    const journal = journalOfWrite(READ, { deleted: true }, deleted, "team-b");
    const { plan, conflicts } = rollbackOf(journal, deleted);
    expect(plan.changes).toEqual([]);
    expect(conflicts).toEqual([
      expect.objectContaining({ id: 3, field: "owner", now: "team-a", left: ["team-b"] }),
    ]);
    // Forced, the run's own change is undone, and the other owner's mark stays.
    const forced = rollbackOf(journal, deleted, true);
    expect(forced.plan.changes[0]?.fields).toEqual({
      enabled: { from: false, to: true },
      deleted: { from: true, to: false },
    });
    expect(forced.plan.owner).toBe("team-b");
  });

  it("undoes a write that put another owner's mark on the record itself (the rollback of a --takeover run, undone in turn)", () => {
    // The rollback of team-b's takeover gave the record back to team-a: its journal names team-b.
    const taken = { ...READ, description: writeMark("drops $ip", "team-b") };
    const journal = journalOfWrite(taken, { description: marked.description }, marked, "team-b");
    const { plan, conflicts } = rollbackOf(journal, marked);
    expect(conflicts).toEqual([]);
    expect(plan.changes[0]?.fields).toEqual({
      description: { from: marked.description, to: taken.description },
    });
  });

  it("undoes a --takeover run's delete of a record that carried the other owner's mark when the run found it", () => {
    const journal = journalOfWrite(marked, { deleted: true }, deleted, "team-b");
    const { plan, conflicts } = rollbackOf(journal, deleted);
    expect(conflicts).toEqual([]);
    expect(plan.changes[0]?.fields).toEqual({
      enabled: { from: false, to: true },
      deleted: { from: true, to: false },
    });
  });

  it("writes a record that carries the run's own mark, or none; a journal without an owner is not checked", () => {
    const own = { ...deleted, description: writeMark("drops $ip", "team-b") };
    const ownSend = { deleted: true, description: own.description };
    expect(rollbackOf(journalOfWrite(READ, ownSend, own, "team-b"), own).conflicts).toEqual([]);
    const unowned = rollbackOf(journalOfWrite(READ, { deleted: true }, deleted), deleted).conflicts;
    expect(unowned.filter((conflict) => conflict.field === "owner")).toEqual([]);
  });

  it("takes an empty description the run sent, shown now as the plugin's own text (posthog-2024), for the run's own write", () => {
    // The run emptied the description; its answer was lost (killed), and the service now shows the
    // plugin's text there, which the journal learnt (for its plugin) from another answer or a read.
    const intent = { type: "intent", seq: 1, op: "update", project: "1", family: PC, id: 3, name: READ.name };
    const journal = parseJournal(
      journalOf(JOURNAL_HEADER, { ...intent, send: { description: null }, before: [image(READ)] }),
      "j.jsonl",
    );
    const replay = replayJournal(journal);
    const touched = [...replay.records.values()][0];
    if (touched === undefined) throw new Error("the journal's record is not replayed");
    touched.pluginTexts = { name: "S3 Export", description: "Export events to an Amazon S3 bucket." };
    const now = { ...READ, description: "Export events to an Amazon S3 bucket." };
    const rolledBack = planRollback({
      journal,
      replay,
      current: { families: [{ project: "1", family: PC, records: [now] }] },
      retrieved: { families: [] },
      force: false,
    });
    expect(rolledBack.conflicts).toEqual([]);
    expect(rolledBack.plan.changes[0]?.fields).toEqual({
      description: { from: "Export events to an Amazon S3 bucket.", to: "drops $ip" },
    });
  });

  it("is held up by no change to a field the run never sent once what it sent is back as it was (undone by hand, or forced)", () => {
    // The run disabled the record; someone since edited its description, and a forced rollback (or
    // a hand) put enabled back. Nothing of the run's is left to undo: the edit stays, and is no
    // conflict, or a rollout whose rollback this is would refuse for ever.
    const answer = { ...READ, enabled: false };
    const journal = journalOfWrite(READ, { enabled: false }, answer);
    const now = { ...READ, description: "edited by hand" };
    const { plan, conflicts } = rollbackOf(journal, now);
    expect(conflicts).toEqual([]);
    expect(plan.changes).toEqual([]);
    // With the run's change still there, the edit is named, as before.
    expect(rollbackOf(journal, { ...now, enabled: false }).conflicts).toEqual([
      expect.objectContaining({ id: 3, field: "description", now: "edited by hand" }),
    ]);
  });
});

describe("a rollback of a run whose creates of one config were lost in two families", () => {
  it("deletes both records they made where one list shows them (posthog-2024), one for each", () => {
    // The run asked for the config under plugin_configs and, by mistake, under the frontend apps;
    // both creates landed unanswered, and the service lists both records under plugin_configs.
    const send = { name: "Mislaid", plugin: 3, enabled: true, order: 1 };
    const create = (seq: number, family: string) => ({
      type: "intent",
      seq,
      op: "create",
      project: "1",
      family,
      id: null,
      name: "Mislaid",
      send,
      before: [],
    });
    const journal = parseJournal(
      journalOf(JOURNAL_HEADER, create(1, PC), create(2, "pipeline_frontend_apps_configs")),
      "j.jsonl",
    );
    const made = [7, 8].map((id) =>
      remoteRecord({ id, name: "Mislaid", plugin: 3, enabled: true, order: 1 }),
    );
    const { plan, notes } = planRollback({
      journal,
      replay: replayJournal(journal),
      current: {
        families: [
          { project: "1", family: PC, records: made },
          { project: "1", family: "pipeline_frontend_apps_configs", records: [] },
        ],
      },
      retrieved: { families: [] },
      force: false,
    });
    expect(plan.changes.map((change) => [change.action, change.id])).toEqual([
      ["delete", 7],
      ["delete", 8],
    ]);
    expect(notes.join("\n")).toContain(
      "records 7, 8 match it, as many as the run's lost creates of this config",
    );
  });

  it("never brings back a record an earlier run made that this run took back as its copy (a config the service kept in another family)", () => {
    // A killed run's create of "mislaid" (plugin 3) under the frontend apps landed under
    // plugin_configs as record 101; this run made its own (103) and deleted both as copies.
    const made = remoteRecord({ id: 101, name: "mislaid", plugin: 3, enabled: false, order: 3 });
    const own = { ...made, id: 103 };
    const deleteOf = (seq: number, record: PluginConfigRecord) => [
      {
        type: "intent",
        seq,
        op: "copy",
        project: "1",
        family: PC,
        id: record.id,
        name: null,
        send: { deleted: true },
        before: [image(record)],
      },
      { type: "outcome", seq, status: "done", records: [image({ ...record, deleted: true })] },
    ];
    const journal = parseJournal(
      journalOf(
        JOURNAL_HEADER,
        {
          type: "intent",
          seq: 1,
          op: "create",
          project: "1",
          family: "pipeline_frontend_apps_configs",
          id: null,
          name: "mislaid",
          send: { plugin: 3, name: "mislaid", order: 3 },
          kept: [101],
          before: [],
        },
        { type: "outcome", seq: 1, status: "done", records: [image(own)] },
        ...deleteOf(2, own),
        ...deleteOf(3, made),
      ),
      "j.jsonl",
    );
    const deleted = [own, made].map((record) => ({ ...record, deleted: true, enabled: false }));
    const current: CurrentState = { families: [{ project: "1", family: PC, records: deleted }] };
    const { plan, notes } = planRollback({
      journal,
      replay: replayJournal(journal),
      current,
      retrieved: { families: [] },
      force: false,
    });
    expect(plan.changes).toEqual([]);
    expect(notes).toContainEqual(expect.stringContaining("record 101"));
    expect(notes.join("\n")).toContain(
      "taken back by the run, as a copy an earlier run of it made: it is not brought back",
    );
  });
});
