// E2E: a journal has one writer. While an apply writes a journal, its rollback is refused (exit 3,
// naming the holder) and the apply finishes; a kill -9 leaves a stale lock that --resume and
// rollback take over; of two rollbacks at once one is refused; and a rollback that would give a
// family two live records of one name (a look-alike included) is refused, --force or not.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { openServer, type TestServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

let files = 0;
const fileIn = (name: string) => join(directory, `${++files}-${name}`);

/** Project 1 with every record changed and three made: an apply of a few seconds under latency. */
function busyManifest(enabled: boolean): string {
  const made = ["One", "Two", "Three"].map((name) => [
    `        - name: Made ${name} ${enabled}`,
    "          plugin: 1",
  ]);
  return manifest(
    "version: 1",
    "projects:",
    '  "1":',
    "    plugin_configs:",
    "      configs:",
    "        - name: GeoIP",
    "          plugin: 1",
    `          enabled: ${enabled}`,
    "        - name: Property Filter",
    "          plugin: 2",
    `          enabled: ${enabled}`,
    ...made.flat(),
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Starts the built apply; resolves once it has announced its first write (lock and journal on disk). */
async function startApply(server: TestServer, args: string[], journal: string) {
  const run = spawnCli(["apply", ...args, "--journal", journal, "--concurrency", "1"], {
    env: server.env,
    cwd: directory,
    timeoutMs: 60_000,
  });
  let ended = false;
  void run.done.then(() => {
    ended = true;
  });
  const written = () => {
    try {
      return readFileSync(journal, "utf8").includes('"type":"intent"');
    } catch {
      return false;
    }
  };
  await waitFor(() => ended || written(), "the apply's first write", 30_000);

  expect(ended, run.soFar().stderr).toBe(false);
  return run;
}

describe("a journal has one writer", { timeout: 120_000, concurrent: true }, () => {
  it("refuses the rollback of a journal whose apply is running; the apply finishes, then rolls back", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = fileIn("busy.yaml");
    await writeFile(file, busyManifest(false));
    const plan = fileIn("busy-plan.json");
    expect((await server.run(["plan", "-f", file, "--out", plan], { cwd: directory })).code).toBe(0);
    server.emulator.setFaults({ latencyMs: 800 });
    // The in-process rollback's modules loaded first: it then meets the apply while it writes.
    const warm = await server.run(["rollback", "--journal", fileIn("absent.jsonl"), "--dry-run"], {
      cwd: directory,
    });
    expect(warm.stderr).toContain("no such file");
    const journal = fileIn("running.jsonl");
    const apply = await startApply(server, ["-f", file, "--auto-approve"], journal);
    const lock = JSON.parse(await readFile(`${journal}.lock`, "utf8")) as { pid: number; host: string };
    expect(lock).toMatchObject({ pid: apply.child.pid, host: hostname() });

    const refused = await server.run(["rollback", "--journal", journal, "--auto-approve"], {
      cwd: directory,
    });
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(`held by pid ${apply.child.pid} on host ${hostname()} (apply, since`);
    const looked = await server.run(["rollback", "--journal", journal, "--dry-run"], { cwd: directory });
    expect(looked.code).toBe(3);
    const resumed = await server.run(["apply", "--plan", plan, "--resume", "--journal", journal], {
      cwd: directory,
    });
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(resumed.stderr).toContain(`held by pid ${apply.child.pid} on host ${hostname()} (apply, since`);
    // Still running: the refusals came while it wrote. It finishes normally, and quickly now.
    expect(apply.child.exitCode).toBe(null);
    server.emulator.setFaults({});

    const applied = await apply.done;
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/Apply complete/);
    expect(await exists(`${journal}.lock`)).toBe(false);
    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], { cwd: directory });
    expect(undone.code, undone.stderr).toBe(0);
    const planned = await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: directory });
    expect(planned.code).toBe(2);
  });

  it("a kill -9 leaves a stale lock that --resume and rollback take over", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { faults: { latencyMs: 200 } });
    const file = fileIn("killed.yaml");
    await writeFile(file, busyManifest(false));
    const plan = fileIn("plan.json");
    const made = await server.run(["plan", "-f", file, "--out", plan], { cwd: directory });
    expect(made.code, made.stderr).toBe(0);

    const journal = fileIn("killed.jsonl");
    const first = await startApply(server, ["--plan", plan], journal);
    first.child.kill("SIGKILL");
    await first.done;
    expect(JSON.parse(await readFile(`${journal}.lock`, "utf8"))).toMatchObject({ pid: first.child.pid });
    // A killed run's writes may still land: the resume and the rollback wait for them, 3.5 x
    // --timeout at most, with every duration at 1/20 here (PCSYNC_TIME_SCALE).
    const scaled = { PCSYNC_TIME_SCALE: "0.05" };
    const resumed = await server.run(["apply", "--plan", plan, "--resume", "--journal", journal], {
      cwd: directory,
      env: scaled,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `was locked by pid ${first.child.pid} on host ${hostname()} (apply, since`,
    );
    expect(resumed.stderr).toContain("no longer running; this run took the lock over");
    expect(await exists(`${journal}.lock`)).toBe(false);

    // Another apply killed -9 at its first write: its rollback takes the stale lock over.
    const other = fileIn("killed-too.yaml");
    await writeFile(other, busyManifest(true));
    const second = fileIn("killed-too.jsonl");
    const killed = await startApply(server, ["-f", other, "--auto-approve"], second);
    killed.child.kill("SIGKILL");
    await killed.done;
    const rolledBack = await server.run(["rollback", "--journal", second, "--auto-approve"], {
      cwd: directory,
      env: scaled,
    });
    expect(rolledBack.code, rolledBack.stderr).toBe(0);
    expect(rolledBack.stderr).toContain(
      `was locked by pid ${killed.child.pid} on host ${hostname()} (apply, since`,
    );
    expect(await exists(`${second}.lock`)).toBe(false);
  });

  it("of two rollbacks of one journal at once, one is refused", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = fileIn("twice.yaml");
    await writeFile(file, busyManifest(false));
    const journal = fileIn("twice.jsonl");
    const applied = await server.run(["apply", "-f", file, "--auto-approve", "--journal", journal], {
      cwd: directory,
    });
    expect(applied.code, applied.stderr).toBe(0);
    server.emulator.setFaults({ latencyMs: 250 });
    const runs = await Promise.all(
      [0, 1].map(
        () =>
          spawnCli(["rollback", "--journal", journal, "--auto-approve", "--concurrency", "1"], {
            env: server.env,
            cwd: directory,
            timeoutMs: 60_000,
          }).done,
      ),
    );
    const codes = runs.map((run) => run.code).sort();
    expect(codes, runs.map((run) => run.stderr).join("\n---\n")).toEqual([0, 3]);
    const refused = runs.find((run) => run.code === 3);
    expect(refused?.stderr).toMatch(/held by pid \d+ on host .* \(rollback, since/);
    server.emulator.setFaults({});
    const planned = await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: directory });
    expect(planned.code).toBe(2);
  });
});

// Not concurrent: it checks that no lock is left under the shared directory's .pcsync/journal/.
describe("a stopped run releases its journal", { timeout: 120_000 }, () => {
  it.for([
    { signal: "SIGTERM", times: 1, code: 143 },
    { signal: "SIGINT", times: 2, code: 130 },
  ] as const)(
    "$signal (x$times) during a rollback's writes leaves no lock behind",
    async ({ signal, times, code }, { onTestFinished }) => {
      const server = await openServer(onTestFinished, "seed");
      const file = fileIn("stopped.yaml");
      await writeFile(file, busyManifest(false));
      const journal = fileIn("stopped.jsonl");
      const applied = await server.run(["apply", "-f", file, "--auto-approve", "--journal", journal], {
        cwd: directory,
      });
      expect(applied.code, applied.stderr).toBe(0);
      server.emulator.setFaults({ latencyMs: 400 });
      const run = spawnCli(["rollback", "--journal", journal, "--auto-approve"], {
        env: server.env,
        cwd: directory,
        timeoutMs: 60_000,
      });
      // Its own journal's lock, under .pcsync/journal/: it has begun writing.
      await waitFor(
        () => {
          try {
            return readdirSync(join(directory, ".pcsync", "journal")).some((name) =>
              name.endsWith(".jsonl.lock"),
            );
          } catch {
            return false;
          }
        },
        "the rollback's own journal",
        30_000,
      );
      for (let sent = 0; sent < times; sent++) run.child.kill(signal);
      const ended = await run.done;
      // A second signal that arrives while the process exits from the first ends it by the signal
      // itself, which a shell reports as the same 128 + n.
      if (ended.signal === null) expect(ended.code, ended.stderr).toBe(code);
      else expect(ended.signal).toBe(signal);
      expect(existsSync(`${journal}.lock`)).toBe(false);
      expect(
        readdirSync(join(directory, ".pcsync", "journal")).filter((name) => name.endsWith(".lock")),
      ).toEqual([]);
    },
  );
});

describe("a rollback never leaves two live records of one name", {
  timeout: 60_000,
  concurrent: true,
}, () => {
  it("refuses bringing back a record whose name (or a look-alike) is taken since, --force or not", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = fileIn("delete-geoip.yaml");
    await writeFile(
      file,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          deleted: true",
      ),
    );
    const journal = fileIn("deleted.jsonl");
    const applied = await server.run(["apply", "-f", file, "--auto-approve", "--journal", journal], {
      cwd: directory,
    });
    expect(applied.code, applied.stderr).toBe(0);
    const created = await server.call("POST", "/api/projects/1/plugin_configs/", {
      plugin: 1,
      order: 7,
      name: "GeoIP",
    });
    const newId = (created.body as { id: number }).id;

    for (const force of [[], ["--force"]]) {
      const refused = await server.run(["rollback", "--journal", journal, "--auto-approve", ...force], {
        cwd: directory,
      });
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr).toContain("two live records of one name");
      expect(refused.stderr).toContain('record 1 ("GeoIP") in project 1 plugin_configs');
      expect(refused.stderr).toContain(`record ${newId} ("GeoIP"), live now`);
    }
    // A look-alike: the same name with white space at its end, or in another Unicode form.
    await server.call("PATCH", `/api/projects/1/plugin_configs/${newId}/`, { name: "GeoIP\u2003" });
    const lookAlike = await server.run(["rollback", "--journal", journal, "--auto-approve", "--force"], {
      cwd: directory,
    });
    expect(lookAlike.code, lookAlike.stderr).toBe(3);
    expect(lookAlike.stderr).toContain(`record ${newId} ("GeoIP\u2003"), live now`);
    const records = await server.list(1, "plugin_configs");
    expect(records.find((record) => record.id === 1)).toBeUndefined();

    await server.call("PATCH", `/api/projects/1/plugin_configs/${newId}/`, { name: "GeoIP v2" });
    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], { cwd: directory });
    expect(undone.code, undone.stderr).toBe(0);
    expect((await server.list(1, "plugin_configs")).find((record) => record.id === 1)?.name).toBe("GeoIP");
  });
});
