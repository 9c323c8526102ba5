// A journal is input: each line is checked against schemas/journal.schema.json, and a bad one is
// refused in the journal's own words, with its line number.

import { describe, expect, it } from "vitest";
import { parseJournal } from "../../src/journal/journal-format.js";
import { JOURNAL_HEADER, journalOf } from "../support/journal-lines.js";

const HEADER = JOURNAL_HEADER;
const IMAGE = {
  id: 5,
  plugin: 2,
  enabled: true,
  deleted: false,
  order: 1,
  name: "a",
  description: null,
  match_action: null,
};
const INTENT = {
  type: "intent",
  seq: 1,
  op: "update",
  project: "1",
  family: "plugin_configs",
  id: 5,
  name: "a",
  send: { enabled: false },
  before: [IMAGE],
};

function reasonFor(...lines: unknown[]): string {
  try {
    parseJournal(journalOf(...lines), "j.jsonl");
  } catch (error) {
    return (error as Error).message;
  }
  return "read";
}

describe("a journal's lines", () => {
  it("read as written", () => {
    const journal = parseJournal(journalOf(HEADER, INTENT, { type: "outcome", seq: 1, status: "done" }), "j");
    expect(journal.intents).toHaveLength(1);
    expect(journal.outcomes.get(1)?.status).toBe("done");
  });

  it("are refused in the journal's words, at the line and place of the first problem", () => {
    expect(reasonFor(HEADER, { type: "intent", seq: "x" })).toMatch(
      /^j\.jsonl:2: seq is not a positive integer\./,
    );
    expect(reasonFor(HEADER, { ...INTENT, before: [{ ...IMAGE, plugin: 0 }] })).toMatch(
      /^j\.jsonl:2: before\[0\]\.plugin is not a plugin id\./,
    );
    expect(reasonFor(HEADER, { ...INTENT, op: "create" })).toMatch(
      /a create carries an id or a before image/,
    );
    const create = { ...INTENT, op: "create", id: null, before: [] };
    expect(reasonFor(HEADER, { ...create, kept: [5, "6"] })).toMatch(
      /^j\.jsonl:2: kept is not a list of record ids\./,
    );
    expect(reasonFor(HEADER, { ...create, kept: [5] })).toBe("read");
    expect(reasonFor(HEADER, { type: "bogus" })).toMatch(/^j\.jsonl:2: unknown line type "bogus"/);
    expect(reasonFor({ ...HEADER, version: 2 })).toMatch(/^j\.jsonl:1: journal version 2 is not known/);
    expect(reasonFor({ ...HEADER, server: "" })).toMatch(/^j\.jsonl:1: server is missing/);
    expect(reasonFor(HEADER, { type: "outcome", seq: 1, status: "done" })).toMatch(
      /which no intent before it has/,
    );
  });

  it("tolerate a last line cut off by a kill, and say so", () => {
    const journal = parseJournal(`${journalOf(HEADER, INTENT)}{"type":"outc`, "j");
    expect(journal.tornLines).toEqual([3]);
  });
});
