// The rollouts a halt is looked for in: every rollout journal of the server, in the default place and
// beside a --journal PATH, newest first, whatever change each rolled out; the waves' apply journals
// and other files beside them are passed over without being read whole.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findRollouts } from "../../src/rollout/rollout-journal.js";

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "pcsync-find-rollouts-"));
});
afterEach(() => rm(cwd, { recursive: true, force: true }));

function header(server: string, startedAt: string, digest: string): string {
  const waves = [{ name: "canary", projects: ["1"] }];
  const rollout = {
    waves,
    bakeSeconds: 0,
    health: { logs: { maxErrorRatio: 0.05, minEntries: 1, allowUnknown: false } },
    failureBudget: 0,
    onFailure: "halt",
  };
  return `${JSON.stringify({ kind: "rollout", version: 1, server, digest, startedAt, rollout, targets: [] })}\n`;
}

describe("findRollouts", () => {
  it("finds the server's rollout journals in both places, newest first, and passes over everything else", async () => {
    await mkdir(join(cwd, ".pcsync", "rollout"), { recursive: true });
    await mkdir(join(cwd, "ci"));
    await writeFile(
      join(cwd, ".pcsync", "rollout", "a.jsonl"),
      header("http://s", "2026-01-01T00:00:00.000Z", "a"),
    );
    await writeFile(join(cwd, "ci", "b.jsonl"), header("http://s", "2026-01-02T00:00:00.000Z", "b"));
    // Another server's, a wave's apply journal, and a file cut before its header's kind.
    await writeFile(join(cwd, "ci", "c.jsonl"), header("http://other", "2026-01-03T00:00:00.000Z", "c"));
    await writeFile(join(cwd, "ci", "b-wave-1.jsonl"), `${JSON.stringify({ type: "header", version: 1 })}\n`);
    await writeFile(join(cwd, "ci", "cut.jsonl"), '{"kind":"rol');
    const found = await findRollouts(cwd, "http://s", "ci");
    expect(found.map((state) => state.header.digest)).toEqual(["b", "a"]);
    expect(await findRollouts(cwd, "http://s")).toHaveLength(1);
  });

  it("fails closed on a rollout journal it cannot read: it may hold a halt (a line added by hand, a fake header)", async () => {
    await mkdir(join(cwd, ".pcsync", "rollout"), { recursive: true });
    const path = join(cwd, ".pcsync", "rollout", "a.jsonl");
    await writeFile(
      path,
      `${header("http://s", "2026-01-01T00:00:00.000Z", "a")}{"kind":"note","text":"alice"}\n`,
    );
    await expect(findRollouts(cwd, "http://s")).rejects.toThrow(
      /cannot read the journal .*a\.jsonl: .*:2: not a line pcsync wrote; pcsync reads every rollout journal in \.pcsync\/rollout to honour a rollout that halted/,
    );
    await writeFile(path, '{"kind":"rollout"}\n');
    await expect(findRollouts(cwd, "http://s")).rejects.toThrow(/not a rollout journal's header/);
  });

  it("passes over a journal whose header a kill cut short as it was made: nothing was written after it", async () => {
    await mkdir(join(cwd, ".pcsync", "rollout"), { recursive: true });
    const whole = header("http://s", "2026-01-01T00:00:00.000Z", "a");
    await writeFile(join(cwd, ".pcsync", "rollout", "a.jsonl"), whole.slice(0, whole.length / 2));
    expect(await findRollouts(cwd, "http://s")).toEqual([]);
  });
});
