// The lock beside a journal: one holder at a time, named when it refuses; a lock whose process is
// gone (same host) is taken over; a lock from another host is never judged stale.

import { spawn, spawnSync } from "node:child_process";
import { readFile, stat, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PcsyncError } from "../../src/errors.js";
import { JournalLock, lockPathOf } from "../../src/journal/journal-lock.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir | undefined;
afterEach(async () => {
  await work?.remove();
  work = undefined;
});

async function directory(): Promise<string> {
  work = await temporaryDirectory();
  return work.path;
}

/** A pid that no process has now: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

async function refusal(promise: Promise<unknown>): Promise<PcsyncError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof PcsyncError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe("journal lock", () => {
  it("has one holder at a time, names it when it refuses, and is gone once released", async () => {
    const cwd = await directory();
    const lock = await JournalLock.acquire("run.jsonl", { cwd, command: "apply" });
    const holder = JSON.parse(await readFile(join(cwd, "run.jsonl.lock"), "utf8")) as Record<string, unknown>;
    expect(holder).toMatchObject({ pid: process.pid, host: hostname(), command: "apply" });
    expect((await stat(join(cwd, "run.jsonl.lock"))).mode & 0o777).toBe(0o600);

    const refused = await refusal(JournalLock.acquire("run.jsonl", { cwd, command: "rollback" }));
    expect(refused.code).toBe("journal_held");
    expect(refused.exitCode).toBe(3);
    expect(refused.message).toContain(`held by pid ${process.pid} on host ${hostname()} (apply, since`);
    const looking = await refusal(JournalLock.refuseIfHeld("run.jsonl", { cwd }));
    expect(looking.code).toBe("journal_held");

    await lock.release();
    await lock.release();
    await expect(stat(join(cwd, "run.jsonl.lock"))).rejects.toThrow();
    const again = await JournalLock.acquire("run.jsonl", { cwd, command: "rollback" });
    expect(again.takeOverNote).toBeUndefined();
    await again.release();
  });

  it("gives the lock to exactly one of many runs that ask at once", async () => {
    const cwd = await directory();
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => JournalLock.acquire("race.jsonl", { cwd, command: "rollback" })),
    );
    const held = results.filter((result) => result.status === "fulfilled");
    expect(held).toHaveLength(1);
    for (const result of results)
      if (result.status === "rejected") expect((result.reason as PcsyncError).code).toBe("journal_held");
    await (held[0] as PromiseFulfilledResult<JournalLock>).value.release();
  });

  it("takes over a lock whose process is gone, and only one of two runs that find it stale does", async () => {
    const cwd = await directory();
    const pid = deadPid();
    const stale = {
      pid,
      host: hostname(),
      since: "2024-06-01T10:00:00.000Z",
      command: "apply",
      token: "old",
    };
    // One run alone: it takes the stale lock over and says whose it was.
    await writeFile(join(cwd, lockPathOf("dead.jsonl")), JSON.stringify(stale));
    const alone = await JournalLock.acquire("dead.jsonl", { cwd, command: "apply --resume" });
    expect(alone.takeOverNote).toContain(
      `locked by pid ${pid} on host ${hostname()} (apply, since 2024-06-01`,
    );
    expect(alone.takeOverNote).toContain("no longer running");
    await alone.release();
    // Two at once: exactly one holds it. The other may find the stale lock already removed and
    // take a free one, so which of them says "took over" depends on timing; the holder is named.
    await writeFile(join(cwd, lockPathOf("dead.jsonl")), JSON.stringify(stale));
    const results = await Promise.allSettled([
      JournalLock.acquire("dead.jsonl", { cwd, command: "apply --resume" }),
      JournalLock.acquire("dead.jsonl", { cwd, command: "rollback" }),
    ]);
    const held = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    expect(held).toHaveLength(1);
    const onDisk = JSON.parse(await readFile(join(cwd, lockPathOf("dead.jsonl")), "utf8")) as {
      token: string;
    };
    expect(onDisk.token).toBe(held[0]?.holder.token);
    const note = held[0]?.takeOverNote;
    if (note !== undefined) expect(note).toContain(`locked by pid ${pid}`);
    await held[0]?.release();
  });

  it("takes over a lock whose process has ended but is not reaped (a zombie), and refuses its live parent's", async () => {
    const cwd = await directory();
    // A shell that starts a child and becomes a process that never waits: the child, once ended,
    // stays a zombie (it still answers kill(pid, 0)) until its parent ends. The child outlives the
    // shell's exec by a second: one that ended before it could be reaped by the shell, and be gone.
    const parent = spawn("sh", ["-c", "sleep 1 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const zombie = Number(
        await new Promise<string>((done) =>
          parent.stdout.once("data", (chunk: Buffer) => done(chunk.toString())),
        ),
      );
      const state = (): string => {
        const text = spawnSync("cat", [`/proc/${zombie}/stat`]).stdout.toString();
        return text.slice(text.lastIndexOf(")") + 2).split(" ")[0] ?? "";
      };
      for (let tries = 0; state() !== "Z" && tries < 250; tries++)
        await new Promise((done) => setTimeout(done, 40));
      expect(state()).toBe("Z");
      const holder = (pid: number) =>
        JSON.stringify({
          pid,
          host: hostname(),
          since: "2024-06-01T10:00:00.000Z",
          command: "apply",
          token: "z",
        });

      await writeFile(join(cwd, lockPathOf("zombie.jsonl")), holder(zombie));
      const lock = await JournalLock.acquire("zombie.jsonl", { cwd, command: "apply --resume" });
      expect(lock.takeOverNote).toContain(`locked by pid ${zombie} on host ${hostname()}`);
      await lock.release();

      await writeFile(join(cwd, lockPathOf("live.jsonl")), holder(parent.pid ?? 0));
      const refused = await refusal(JournalLock.acquire("live.jsonl", { cwd, command: "apply" }));
      expect(refused.code).toBe("journal_held");
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("takes over a lock with this process's pid that this process does not hold (a restarted container)", async () => {
    const cwd = await directory();
    const old = {
      pid: process.pid,
      host: hostname(),
      since: "2024-06-01T10:00:00.000Z",
      command: "heal",
      token: "x",
    };
    await writeFile(join(cwd, lockPathOf("mine.jsonl")), JSON.stringify(old));
    const lock = await JournalLock.acquire("mine.jsonl", { cwd, command: "apply" });
    expect(lock.takeOverNote).toContain("no longer running");
    await lock.release();
  });

  it("never judges a lock of another host stale: refused, saying which file to delete if that run is gone", async () => {
    const cwd = await directory();
    const other = {
      pid: deadPid(),
      host: `${hostname()}-elsewhere`,
      since: "2024-06-01T10:00:00.000Z",
      command: "apply",
      token: "t",
    };
    await writeFile(join(cwd, lockPathOf("far.jsonl")), JSON.stringify(other));
    const refused = await refusal(JournalLock.acquire("far.jsonl", { cwd, command: "rollback" }));
    expect(refused.code).toBe("journal_held");
    expect(refused.message).toContain(`on host ${other.host}`);
    expect(refused.message).toContain(`delete ${join(cwd, "far.jsonl.lock")}`);
    expect(JSON.parse(await readFile(join(cwd, "far.jsonl.lock"), "utf8"))).toEqual(other);
  });

  it("holds an unreadable lock file while it is young (being written), and takes it over once old", async () => {
    const cwd = await directory();
    const path = join(cwd, lockPathOf("torn.jsonl"));
    await writeFile(path, "");
    expect((await refusal(JournalLock.acquire("torn.jsonl", { cwd, command: "apply" }))).code).toBe(
      "journal_held",
    );
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    const lock = await JournalLock.acquire("torn.jsonl", { cwd, command: "apply" });
    await lock.release();
  });

  it("a release never removes a lock another run holds now", async () => {
    const cwd = await directory();
    const lock = await JournalLock.acquire("swap.jsonl", { cwd, command: "apply" });
    const path = join(cwd, lockPathOf("swap.jsonl"));
    const other = {
      pid: 1,
      host: `${hostname()}-elsewhere`,
      since: "now",
      command: "rollback",
      token: "theirs",
    };
    await writeFile(path, JSON.stringify(other));
    await lock.release();
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual(other);
  });
});
