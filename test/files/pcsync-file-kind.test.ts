// Each of pcsync's own files handed to the reader of another kind (a rollout's journal to rollback,
// an apply's journal to apply --plan, a saved plan to rollback, ...) is refused saying what it is and
// which command takes it, not as a broken or edited file; a file of the right kind, or of no kind
// pcsync knows, goes on to the reader's own checks.

import { describe, expect, it } from "vitest";
import { FILE_FORMATS, pcsyncFileKind } from "../../src/files/pcsync-file-kind.js";
import { InputError } from "../../src/input-error.js";
import { JOURNAL_FORMAT, parseJournal } from "../../src/journal/journal-format.js";
import { PLAN_FORMAT, parsePlanFile } from "../../src/plan/plan-file.js";
import { getPlanValidator } from "../../src/plan/plan-validator.js";

const PLAN = `${JSON.stringify({ format: PLAN_FORMAT, version: 2, changes: [] }, null, 2)}\n`;
const JOURNAL = `${JSON.stringify({ type: "header", format: JOURNAL_FORMAT, version: 1 })}\n`;
const ROLLOUT = `${[
  { kind: "rollout", version: 1, server: "http://127.0.0.1:1" },
  { kind: "wave_started", wave: 0, journal: ".pcsync/journal/a-wave-1.jsonl" },
  { kind: "wave_written", wave: 0 },
  { kind: "wave_started", wave: 1, journal: ".pcsync/journal/b-wave-2.jsonl" },
]
  .map((line) => JSON.stringify(line))
  .join("\n")}\n`;

function refusal(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    if (error instanceof InputError && error.code === "wrong_file_kind") return error.message;
    return `another error: ${(error as Error).message}`;
  }
  return "read without an error";
}

const asJournal = (text: string) => () => parseJournal(text, "f.jsonl");
const asPlan = (text: string) => () => parsePlanFile(text, "f.jsonl", getPlanValidator());

describe("one of pcsync's files handed to the reader of another kind", () => {
  it("tells the kinds apart, with the formats the readers write", () => {
    expect(FILE_FORMATS).toEqual({ plan: PLAN_FORMAT, journal: JOURNAL_FORMAT });
    expect([PLAN, JOURNAL, ROLLOUT, "{}\n", "not json"].map(pcsyncFileKind)).toEqual([
      "plan",
      "journal",
      "rollout_journal",
      undefined,
      undefined,
    ]);
  });

  it.each([
    [
      "a rollout's journal to rollback",
      asJournal(ROLLOUT),
      "f.jsonl is a rollout's journal, not an apply's journal: each wave keeps a journal of its own, and the rollout did not end: run the same `pcsync apply -f MANIFEST` again to finish it; to undo what it wrote, roll back its waves' journals, newest first: `pcsync rollback --journal .pcsync/journal/b-wave-2.jsonl`, then `pcsync rollback --journal .pcsync/journal/a-wave-1.jsonl`",
    ],
    [
      "a saved plan to rollback",
      asJournal(PLAN),
      "f.jsonl is a saved plan, not an apply's journal: apply it with `pcsync apply --plan f.jsonl`",
    ],
    [
      "an apply's journal to apply --plan",
      asPlan(JOURNAL),
      "f.jsonl is an apply's journal, not a saved plan: undo that apply with `pcsync rollback --journal f.jsonl`",
    ],
    [
      "a rollout's journal to apply --plan",
      asPlan(ROLLOUT),
      "f.jsonl is a rollout's journal, not a saved plan: each wave keeps a journal of its own",
    ],
  ])("refuses %s, saying what it is and what takes it", (_, read, message) => {
    expect(refusal(read)).toContain(message);
  });

  it("leaves the right kind, and files of no kind pcsync knows, to the reader's own checks", () => {
    expect(refusal(asJournal(JOURNAL))).not.toContain("not an apply's journal");
    expect(refusal(asJournal("{}\n"))).toContain(
      "another error: f.jsonl:1: the first line is not a journal header",
    );
    expect(refusal(asPlan("{}"))).toContain(
      'another error: f.jsonl is not a pcsync plan: it has no "format"',
    );
    expect(refusal(asJournal(`${JSON.stringify({ kind: "rollout" })}\n`))).toContain(
      "no wave's writes are left to undo",
    );
    // Ended: complete, or halted with its waves rolled back (those are not offered again).
    const ended = (lines: object[]) => `${ROLLOUT}${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
    expect(refusal(asJournal(ended([{ kind: "end", result: "complete" }])))).toContain(
      "and the rollout is complete; to undo what it wrote, roll back its waves' journals, newest first: `pcsync rollback --journal .pcsync/journal/b-wave-2.jsonl`, then",
    );
    // A wave's rollback line names the wave (an older pcsync also wrote `journal: null`), and it
    // undoes each journal the wave wrote through (two here: the wave was resumed after a kill).
    const rolledBack = (secondComplete: boolean) =>
      ended([
        { kind: "wave_started", wave: 1, journal: ".pcsync/journal/c-wave-2.jsonl" },
        { kind: "halted", wave: 1, failing: ["2"] },
        { kind: "wave_rolled_back", wave: 1, journal: null, complete: secondComplete },
        { kind: "wave_rolled_back", wave: 0, journal: null, complete: false },
        { kind: "end", result: "halted" },
      ]);
    expect(refusal(asJournal(rolledBack(true)))).toContain(
      "and the rollout halted; to undo what it wrote, roll back its waves' journals, newest first: `pcsync rollback --journal .pcsync/journal/a-wave-1.jsonl`",
    );
    expect(refusal(asJournal(rolledBack(false)))).toContain(
      "newest first: `pcsync rollback --journal .pcsync/journal/c-wave-2.jsonl`, then `pcsync rollback --journal .pcsync/journal/b-wave-2.jsonl`, then `pcsync rollback --journal .pcsync/journal/a-wave-1.jsonl`",
    );
    const allUndone = ended([
      { kind: "halted", wave: 1, failing: ["2"] },
      { kind: "wave_rolled_back", wave: 1, complete: true },
      { kind: "wave_rolled_back", wave: 0, complete: true },
      { kind: "end", result: "halted" },
    ]);
    expect(refusal(asJournal(allUndone))).toContain("the rollout halted; no wave's writes are left to undo");
  });
});
