// Which waves a rollback of a whole rollout undoes, and in which order: the waves still written,
// newest first, each through every journal it wrote (newest first: a wave resumed after a kill wrote
// through more than one), never one the rollout or an earlier undo rolled back; a rollout that did
// not end, or a journal edited by hand, is refused before anything is read from the service.

import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/input-error.js";
import { JournalLock } from "../../src/journal/journal-lock.js";
import { RefusedError } from "../../src/refused-error.js";
import { rolloutRunLock } from "../../src/rollout/rollout-journal.js";
import { recordWaveUndone, rolloutToUndo } from "../../src/rollout/undo-rollout.js";

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "pcsync-undo-rollout-"));
  await mkdir(join(cwd, ".pcsync", "rollout"), { recursive: true });
});
afterEach(() => rm(cwd, { recursive: true, force: true }));

const AT = "2026-01-01T00:00:00.000Z";
const HEADER = {
  kind: "rollout",
  version: 1,
  server: "http://s",
  digest: "d".repeat(64),
  startedAt: AT,
  rollout: {
    waves: [
      { name: "canary", projects: ["1"] },
      { name: "half", projects: ["2", "3"] },
      { name: "rest", projects: ["4"] },
    ],
    bakeSeconds: 0,
    health: { logs: { maxErrorRatio: 0.05, minEntries: 1, allowUnknown: false } },
    failureBudget: 0,
    onFailure: "halt",
  },
  targets: [],
};
const started = (wave: number, journal: string) => ({ kind: "wave_started", wave, journal, at: AT });

async function journalOf(lines: object[]): Promise<string> {
  const path = join(".pcsync", "rollout", "r.jsonl");
  await writeFile(join(cwd, path), `${[HEADER, ...lines].map((line) => JSON.stringify(line)).join("\n")}\n`);
  return path;
}

describe("rolloutToUndo", () => {
  it("undoes the waves still written newest first, each wave's journals newest first", async () => {
    const path = await journalOf([
      started(0, "w1.jsonl"),
      { kind: "wave_written", wave: 0, at: AT },
      started(1, "w2a.jsonl"),
      // Killed in the wave; the resume wrote the rest of it through a journal of its own.
      started(1, "w2b.jsonl"),
      { kind: "wave_written", wave: 1, at: AT },
      { kind: "halted", wave: 1, at: AT, failing: ["2"] },
      { kind: "end", at: AT, result: "halted" },
    ]);
    const undo = await rolloutToUndo(cwd, path, true);
    try {
      expect(undo.ended).toBe("halted");
      expect(undo.waves).toEqual([
        { index: 1, name: "half", projects: ["2", "3"], journals: ["w2b.jsonl", "w2a.jsonl"] },
        { index: 0, name: "canary", projects: ["1"], journals: ["w1.jsonl"] },
      ]);
      // Recorded as undone, a wave is not offered again.
      await recordWaveUndone(undo, undo.waves[0] as (typeof undo.waves)[number], cwd);
    } finally {
      await undo.release();
    }
    expect(await readFile(join(cwd, path), "utf8")).toMatch(
      /"kind":"wave_rolled_back","wave":1,.*"complete":true\}\n$/,
    );
    const again = await rolloutToUndo(cwd, path, false);
    expect(again.waves.map((wave) => wave.name)).toEqual(["canary"]);
  });

  it("passes over a wave whose rollback was complete, not one whose rollback was not", async () => {
    const path = await journalOf([
      started(0, "w1.jsonl"),
      started(1, "w2.jsonl"),
      { kind: "halted", wave: 1, at: AT, failing: ["2"] },
      { kind: "wave_rolled_back", wave: 1, at: AT, complete: true },
      { kind: "wave_rolled_back", wave: 0, at: AT, complete: false },
      { kind: "end", at: AT, result: "halted" },
    ]);
    expect((await rolloutToUndo(cwd, path, false)).waves.map((wave) => wave.journals)).toEqual([
      ["w1.jsonl"],
    ]);
  });

  it("refuses a rollout that did not end, naming the waves' journals; and one edited by hand", async () => {
    const unfinished = await journalOf([started(0, "w1.jsonl"), started(1, "w2.jsonl")]);
    const refusal = await rolloutToUndo(cwd, unfinished, true).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(InputError);
    expect((refusal as InputError).code).toBe("rollout_unfinished");
    expect((refusal as InputError).facts).toMatchObject({ journals: ["w2.jsonl", "w1.jsonl"] });
    // The lock taken for the check was let go: another look takes it again.
    await expect(rolloutToUndo(cwd, unfinished, true)).rejects.toThrow(/did not end/);

    const edited = await journalOf([started(0, "w1.jsonl"), { kind: "end", at: AT, result: "done" }]);
    await expect(rolloutToUndo(cwd, edited, false)).rejects.toThrow(
      /r\.jsonl:3: not a line pcsync wrote\. The rollout's journal was not written this way by pcsync/,
    );
  });

  it("is refused (exit 3) while a run holds the rollout's lock: it drives that rollout", async () => {
    const path = await journalOf([started(0, "w1.jsonl"), { kind: "end", at: AT, result: "complete" }]);
    const driver = await JournalLock.acquire(rolloutRunLock(HEADER.digest), {
      cwd,
      command: "apply (rollout)",
    });
    try {
      const refusal = await rolloutToUndo(cwd, path, true).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(RefusedError);
      expect((refusal as RefusedError).message).toContain("this manifest's rollout");
    } finally {
      await driver.release();
    }
    const undo = await rolloutToUndo(cwd, path, true);
    await undo.release();
    expect(undo.waves.map((wave) => wave.name)).toEqual(["canary"]);
  });

  it("takes the rollout's lock where no rollout ran: its journal kept elsewhere (apply --journal PATH)", async () => {
    await rm(join(cwd, ".pcsync"), { recursive: true });
    await mkdir(join(cwd, "ci"));
    const path = join("ci", "rollout.jsonl");
    const lines = [HEADER, started(0, "w1.jsonl"), { kind: "end", at: AT, result: "complete" }];
    await writeFile(join(cwd, path), `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    const undo = await rolloutToUndo(cwd, path, true);
    await undo.release();
    expect(undo.waves.map((wave) => wave.name)).toEqual(["canary"]);
  });
});
