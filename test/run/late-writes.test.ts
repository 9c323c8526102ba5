// Until when a journal's run may still have a write land (src/run/late-writes.ts), row by row: a
// write sent again after no answer (the end line's time), and writes a killed run sent and never
// had answered, with what followed them in the journal and how long ago its last line was written.

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/index.js";
import { parseJournal } from "../../src/journal/journal-format.js";
import { killedRunsCreates, lateWritesOf } from "../../src/run/late-writes.js";
import { JOURNAL_HEADER, journalOf } from "../support/journal-lines.js";

const HEADER = JOURNAL_HEADER;
const update = (seq: number) => ({
  type: "intent",
  seq,
  op: "update",
  project: "1",
  family: "plugin_configs",
  id: seq,
  name: `u${seq}`,
  send: { enabled: false },
  before: [
    {
      id: seq,
      plugin: 2,
      enabled: true,
      deleted: false,
      order: 1,
      name: `u${seq}`,
      description: null,
      match_action: null,
    },
  ],
});
const create = (seq: number) => ({
  type: "intent",
  seq,
  op: "create",
  project: "1",
  family: "plugin_configs",
  id: null,
  name: `c${seq}`,
  send: { plugin: 1, name: `c${seq}` },
  before: [],
});
const outcome = (seq: number, status = "done") => ({ type: "outcome", seq, status });
const summary = { done: 0, failed: 0, skipped: 0, unknown: 0 };
const end = (at: string, mayLandUntil?: string) => ({
  type: "end",
  at,
  summary,
  interrupted: false,
  ...(mayLandUntil === undefined ? {} : { mayLandUntil }),
});
const resume = (at: string) => ({ type: "resume", at });

// The defaults: a 30 s timeout, 8 retries with backoff up to 5 s; a write may land until 2.5 x the
// timeout after the client would have given up on it: 105 s after it was last sent.
const client = {
  requestTimeoutMs: 30_000,
  timeScale: 1,
  retryOptions: { retries: 8, baseDelayMs: 250, maxDelayMs: 5_000, maxRetryAfterMs: 90_000 },
} as unknown as ApiClient;
const LANDS_MS = 30_000 + 75_000;
// Every attempt with its longest backoff, and a create's 3 proof windows of resends.
const LONGEST_SEND_MS = 9 * 35_000 + 3 * 75_000;

const NOW = Date.parse("2026-01-01T01:00:00Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();

function lateOf(lines: unknown[], modifiedAgoMs: number, which?: (intent: { op: string }) => boolean) {
  const text = journalOf(...lines);
  const journal = { ...parseJournal(text, "j.jsonl"), modifiedAt: new Date(NOW - modifiedAgoMs) };
  const late = lateWritesOf(journal, client, { ...(which === undefined ? {} : { which }), now: NOW });
  return late === undefined ? undefined : late.until.getTime() - NOW;
}

describe("until when a journal's run may still have a write land (ms from now)", () => {
  it.each<[string, unknown[], number, number | undefined]>([
    [
      "every write answered, and the run ended",
      [HEADER, update(1), outcome(1), end(ago(1_000))],
      1_000,
      undefined,
    ],
    [
      "an update sent again after no answer: its end line's time",
      [HEADER, update(1), outcome(1), end(ago(1_000), new Date(NOW + 40_000).toISOString())],
      1_000,
      40_000,
    ],
    [
      "an end line's time that has passed",
      [HEADER, update(1), outcome(1), end(ago(1_000), ago(1))],
      1_000,
      undefined,
    ],
    ["killed with a write in flight, just now: it may be sent until now", [HEADER, update(1)], 500, LANDS_MS],
    [
      "killed with its answer pending a minute ago: still sent until now",
      [HEADER, create(1)],
      60_000,
      LANDS_MS,
    ],
    [
      "killed so long ago that the run sent nothing since it was",
      [HEADER, update(1)],
      LONGEST_SEND_MS + LANDS_MS + 1,
      undefined,
    ],
    [
      "killed a while ago: sent at the latest that long after the last line",
      [HEADER, update(1)],
      LONGEST_SEND_MS + 10_000,
      LANDS_MS - 10_000,
    ],
    ["killed after the write was reported unknown", [HEADER, update(1), outcome(1, "unknown")], 0, LANDS_MS],
    [
      "killed, then resumed 10 s ago: the killed run was gone by the resume",
      [HEADER, create(1), resume(ago(10_000)), create(2), outcome(2), end(ago(5_000))],
      5_000,
      LANDS_MS - 10_000,
    ],
    [
      "an ended run's unknown write: its end line says (here nothing)",
      [HEADER, update(1), outcome(1, "unknown"), end(ago(1_000))],
      1_000,
      undefined,
    ],
  ])("%s", (_what, lines, modifiedAgoMs, expected) => {
    expect(lateOf(lines, modifiedAgoMs)).toBe(expected);
  });

  it("leaves the end line's time out when asked (an apply's or a resume's wait: a killed run's creates only)", () => {
    const text = journalOf(
      HEADER,
      update(1),
      outcome(1),
      end(ago(1_000), new Date(NOW + 40_000).toISOString()),
    );
    const journal = { ...parseJournal(text, "j"), modifiedAt: new Date(NOW) };
    expect(lateWritesOf(journal, client, { now: NOW })?.until.getTime()).toBe(NOW + 40_000);
    expect(lateWritesOf(journal, client, { endLine: false, now: NOW })).toBeUndefined();
  });

  it("counts only the writes asked about (a resume: the creates)", () => {
    const creates = (intent: { op: string }) => intent.op === "create";
    expect(lateOf([HEADER, update(1)], 0, creates)).toBeUndefined();
    expect(lateOf([HEADER, update(1), outcome(1), create(2)], 0, creates)).toBe(LANDS_MS);
  });

  it("names the writes and the time", () => {
    const text = journalOf(HEADER, create(1), update(2));
    const late = lateWritesOf({ ...parseJournal(text, "j"), modifiedAt: new Date(NOW) }, client, {
      now: NOW,
    });
    expect(late?.why).toBe(
      `the run that wrote the journal was stopped with 2 writes begun and not answered (create "c1" in project 1 plugin_configs, ...), and the service may still apply them until ${new Date(NOW + LANDS_MS).toISOString()}`,
    );
  });
});

describe("the creates of a run killed in this directory that a plan would make again", () => {
  const plan = {
    changes: [{ action: "create", project: "1", family: "plugin_configs", name: "c1" }],
  } as unknown as Parameters<typeof killedRunsCreates>[2];
  const here = { ...client, base: { display: JOURNAL_HEADER.server } } as unknown as ApiClient;

  it("are found in a journal file of the default directory, and anything there that is not a file is passed over without being read", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "pcsync-killed-"));
    const directory = join(cwd, ".pcsync", "journal");
    await mkdir(directory, { recursive: true });
    // A FIFO would hold a read until something writes to it: never, here.
    execFileSync("mkfifo", [join(directory, "a-fifo.jsonl")]);
    await mkdir(join(directory, "a-directory.jsonl"));
    expect(await killedRunsCreates(here, cwd, plan)).toBeUndefined();

    await writeFile(join(directory, "killed.jsonl"), journalOf(HEADER, create(1)));
    const late = await killedRunsCreates(here, cwd, plan);
    expect(late?.why).toContain(
      `${join(".pcsync", "journal", "killed.jsonl")}: the run that wrote the journal was stopped with 1 write begun`,
    );
  });
});
