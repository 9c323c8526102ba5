// Writes that land after the client stopped waiting, end to end (the CLI in-process): a POST that
// commits up to twice --timeout after the client gave up, one that commits and is never answered,
// and a service that goes away in the middle of many creates; an update whose first PATCH lands
// late, after the retry was answered: the apply says until when it may. Apply ends with one record per
// config, and its summary counts what the server holds: what it cannot know is reported unknown.

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import { spawnCli } from "../support/cli.js";
import { countByName, type FamilyServer, startFamilyServer } from "../support/family-server.js";
import { runCliInProcess } from "../support/in-process.js";
import { createsManifest, manifest, names } from "../support/manifest-text.js";
import { KEY } from "../support/scenario.js";
import { sendJson } from "../support/scripted-server.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const servers: FamilyServer[] = [];
const directories: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const remove of directories.splice(0)) await remove();
});

async function applyAgainst(server: FamilyServer, manifestText: string, extra: string[], timeScale?: number) {
  servers.push(server);
  const directory = await temporaryDirectory();
  directories.push(directory.remove);
  const manifest = await writeManifest(directory.path, manifestText);
  return await runCliInProcess(
    ["apply", "--auto-approve", "-f", manifest, "--base-url", server.url, ...extra],
    {
      env: {
        PCSYNC_API_KEY: KEY,
        PCSYNC_TIME_SCALE: timeScale === undefined ? undefined : String(timeScale),
      },
      cwd: directory.path,
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The client's request timeout in these tests (seconds); the settle window is 2.5 times that. Every
// duration of the client is shrunk by the same factor (PCSYNC_TIME_SCALE), not the timeout alone.
const TIMEOUT_S = 1;
const TIME_SCALE = TIMEOUT_S / 30;

describe.concurrent("a POST whose outcome is unknown", () => {
  it("commits 1x to 2x --timeout after the client gave up: adopted, never sent again", async () => {
    // Each POST waits for the client to hang up, commits that much later, then answers too late.
    const lateness = [1, 1.5, 2];
    const server = await startFamilyServer({
      onPost: (post) => {
        const late = lateness[post.index] ?? 0;
        void post.clientGone.then(async () => {
          await sleep(late * TIMEOUT_S * 1000);
          post.answer(post.commit());
        });
      },
    });
    const configs = names("Late", 3);
    const run = await applyAgainst(server, createsManifest(configs), ["--format", "json"], TIME_SCALE);
    expect(run.code, run.stderr).toBe(0);
    // One POST per config: none was sent again while the first could still commit.
    expect(server.arrivals.filter((arrival) => arrival.method === "POST")).toHaveLength(3);
    expect([...countByName(server.records)]).toEqual(configs.map((name) => [name, 1]));
    const { result } = JSON.parse(run.stdout) as {
      result: { done: number; failed: number; unknown: number; outcomes: { status: string; id: number }[] };
    };
    expect(result).toMatchObject({ done: 3, failed: 0, unknown: 0 });
    expect(result.outcomes.map((outcome) => outcome.id).sort()).toEqual(
      server.records.map((stored) => stored.id).sort(),
    );
  }, 30_000);

  it("commits at once or after the client gave up, and is never answered: one record each, summary true", async () => {
    // "Silent 1" commits on arrival; "Silent 2" 1.5x --timeout after the client hung up.
    const server = await startFamilyServer({
      onPost: (post) => {
        if (post.index === 0) {
          post.commit();
          return;
        }
        void post.clientGone.then(async () => {
          await sleep(1.5 * TIMEOUT_S * 1000);
          post.commit();
        });
      },
    });
    // One create at a time, so that "Silent 1" is the first POST the server sees.
    const configs = names("Silent", 2);
    const run = await applyAgainst(server, createsManifest(configs), ["--concurrency", "1"], TIME_SCALE);
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect([...countByName(server.records)]).toEqual(configs.map((name) => [name, 1]));
    expect(run.stdout).toContain("Apply complete: 2 created, 0 updated, 0 deleted, 0 reordered.");
    expect(server.arrivals.filter((arrival) => arrival.method === "POST")).toHaveLength(2);
  }, 30_000);
});

describe.concurrent("a create the service answered with its own error", () => {
  it("answered 500 after it committed: found by one re-read, summed up as created, never sent again", async () => {
    const server = await startFamilyServer({
      onPost: (post) => {
        post.commit();
        sendJson(post.response, 500, {
          type: "server_error",
          code: "error",
          detail: "A server error occurred.",
          attr: null,
        });
      },
    });
    const run = await applyAgainst(server, createsManifest(["Committed"]), []);
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain("Apply complete: 1 created, 0 updated, 0 deleted, 0 reordered.");
    expect(server.arrivals.filter((arrival) => arrival.method === "POST")).toHaveLength(1);
    expect(server.records).toHaveLength(1);
  }, 30_000);

  it("answered 503 before committing: sent again at once after one re-read, not after a 75 s window", async () => {
    const server = await startFamilyServer({
      onPost: (post) => {
        if (post.index > 0) return post.answer(post.commit());
        sendJson(post.response, 503, {
          type: "server_error",
          code: "service_unavailable",
          detail: "Service temporarily unavailable, try again later.",
          attr: null,
        });
      },
    });
    // At the real defaults: --timeout 30, a proof window of 75 s that this failure does not need.
    const started = Date.now();
    const run = await applyAgainst(server, createsManifest(["Retried"]), []);
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(server.arrivals.filter((arrival) => arrival.method === "POST")).toHaveLength(2);
    expect(server.records).toHaveLength(1);
  }, 60_000);
});

describe.concurrent("a create whose answers are always lost", () => {
  it("gets a whole proof window for each of its 3 POSTs, then is reported not made, never sent a 4th time", async () => {
    // A proxy's 503 page: not the service's answer, so each POST may still be in flight.
    const server = await startFamilyServer({
      onPost: (post) => sendJson(post.response, 503, { detail: "unavailable" }),
    });
    // --timeout 0.2: a window of 1 s (the floor).
    const run = await applyAgainst(server, createsManifest(["Lost"]), ["--timeout", "0.2"]);
    expect(run.code, run.stderr).toBe(1);
    const posts = server.arrivals.filter((arrival) => arrival.method === "POST").map((arrival) => arrival.at);
    expect(posts).toHaveLength(3);
    // No window was cut: each resend waited for a read started a whole window after the give-up.
    for (let index = 1; index < posts.length; index += 1)
      expect((posts[index] ?? 0) - (posts[index - 1] ?? 0)).toBeGreaterThanOrEqual(1_000);
    expect(run.stdout).toMatch(
      /✗ failed: create "Lost".*the create was sent 3 times, and none of them made the record \(re-reading the family showed so\)/,
    );
    expect(server.records).toHaveLength(0);
  }, 30_000);

  it("refuses a --settle-timeout shorter than the windows it must hold, before sending anything", async () => {
    const server = await startFamilyServer({});
    const run = await applyAgainst(server, createsManifest(["Early"]), [
      "--timeout",
      "0.2",
      "--settle-timeout",
      "1.5",
    ]);
    // Bad flags exit 1, as every usage error does (2 is plan's "changes pending").
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /--settle-timeout 1\.5 is shorter than the 3 s that settling one create may need: a proof window of 1 s \(2\.5 × --timeout, at least 1 s\) for each of its 3 POSTs/,
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(server.arrivals).toHaveLength(0);
  }, 30_000);
});

describe.concurrent("a service that goes away in the middle of many creates", () => {
  it("counts as created exactly what it answered, and reports the rest unknown or failed, honestly", async () => {
    const total = 100;
    const answered = 30;
    const lostAnswers = 5;
    let dying = false;
    let lost = 0;
    const server: FamilyServer = await startFamilyServer({
      // Dying: reads lose their connection.
      intercept: (request, response) => {
        if (!dying || request.method === "POST") return false;
        response.socket?.destroy();
        return true;
      },
      onPost: (post) => {
        if (post.index < answered) {
          post.answer(post.commit());
          if (post.index === answered - 1) dying = true;
          return;
        }
        // The next POSTs commit, but their answers are lost; then the service is gone.
        post.commit();
        post.response.socket?.destroy();
        lost += 1;
        if (lost === lostAnswers) void server.goAway();
      },
    });
    // Every duration at 1/60: a timeout of 0.5 s.
    const run = await applyAgainst(
      server,
      createsManifest(names("Bulk", total)),
      ["--concurrency", "4"],
      1 / 60,
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).not.toMatch(/^\s+at /m);
    const summary =
      /Apply incomplete: (\d+) created, 0 updated, 0 deleted, 0 reordered; (\d+) failed, 0 skipped(?:, (\d+) unknown)?(?:, (\d+) unchecked)?\./.exec(
        run.stdout,
      );
    expect(summary, run.stdout.slice(-2000)).not.toBeNull();
    const [, created, failed, unknown] = (summary ?? []).map((value) => Number(value ?? 0));
    // Created is what the server answered 201 for: the client knows nothing more.
    expect(created).toBe(answered);
    expect(Number(created) + Number(failed) + Number(unknown)).toBe(total);
    // Every record the server holds beyond those is reported unknown, never failed or created.
    expect(server.committed).toHaveLength(answered + lostAnswers);
    expect(lostAnswers).toBeLessThanOrEqual(Number(unknown));
    // Failed means never sent: the service could not be reached.
    const failedLines = run.stdout.split("\n").filter((line) => line.startsWith("✗ failed"));
    expect(failedLines).toHaveLength(Number(failed));
    for (const line of failedLines) expect(line).toMatch(/could not reach/);
    const unknownLines = run.stdout.split("\n").filter((line) => line.startsWith("? unknown"));
    expect(unknownLines).toHaveLength(Number(unknown));
    for (const line of unknownLines) expect(line).toMatch(/may or may not have been created/);
    expect(run.stdout).toContain("Run `pcsync plan` to see what the server holds");
    expect(run.stderr).toMatch(/^pcsync: apply incomplete: \d+ failed, 0 skipped, \d+ unknown, 30 done/m);
  }, 60_000);
});

describe.concurrent("the summary is true when only the check after the creates fails", () => {
  it("counts a create answered 201 as created, and says the duplicate check could not run", async () => {
    const read = new Set<string>();
    const server = await startFamilyServer({
      intercept: (request, response) => {
        if (request.method !== "GET") return false;
        // The plan's reads (one of each list) work; every read after the creates fails.
        const path = request.url?.split("?")[0] ?? "";
        if (!read.has(path)) {
          read.add(path);
          return false;
        }
        sendJson(response, 500, {
          type: "server_error",
          code: "error",
          detail: "A server error occurred.",
          attr: null,
        });
        return true;
      },
    });
    const run = await applyAgainst(server, createsManifest(["Checked"]), [], TIME_SCALE);
    expect(run.code, run.stderr).toBe(1);
    expect(server.records).toHaveLength(1);
    expect(run.stdout).toMatch(
      /^! unchecked: create "Checked" \(id 100\) in project 1 plugin_configs .*: created as id 100, but the check for a copy of it .* could not run: re-reading the family failed \(500 GET .*\); run `pcsync plan` to see whether there is one$/m,
    );
    expect(run.stdout).toContain(
      "Apply incomplete: 1 created, 0 updated, 0 deleted, 0 reordered; 0 failed, 0 skipped, 1 unchecked.",
    );
    expect(run.stderr).toContain("Run `pcsync plan` first to see what the server holds");
  }, 30_000);
});

/**
 * The emulator (with `options`), a directory holding `manifestText` as `file`, and `pcsync ARGS`
 * run there against it, every duration at 0.02 (the request timeout 0.6 s).
 */
async function againstEmulator(options: EmulatorOptions, manifestText: string) {
  const emulator = await startEmulator({ keys: [{ key: KEY, scopes: null, projects: "*" }], ...options });
  const directory = await temporaryDirectory();
  directories.push(directory.remove);
  const file = await writeManifest(directory.path, manifestText);
  const pcsync = (args: string[]) =>
    runCliInProcess([...args, "--base-url", emulator.url], {
      env: { PCSYNC_API_KEY: KEY, PCSYNC_TIME_SCALE: "0.02" },
      cwd: directory.path,
    });
  return { emulator, file, pcsync, directory: directory.path };
}

/** GeoIP of project 1 gets a description: one PATCH. */
const updateGeoIp = manifest(
  "version: 1",
  "projects:",
  '  "1":',
  "    plugin_configs:",
  "      configs:",
  "        - name: GeoIP",
  "          plugin: 1",
  "          description: changed",
);

describe("an update whose first PATCH lands late", () => {
  // Seed 18: the emulator's first write is held past the client's timeout, the next ones are not.
  // The first PATCH, held 2 s, lands 1.4 s after the client gave up on it.
  const faults = { lateWriteRate: 0.5, lateWriteMs: 2_000, seed: 18 };

  async function applyWith(emulatorFaults: EmulatorOptions["faults"], extra: string[] = []) {
    const world = await againstEmulator({ faults: emulatorFaults ?? {} }, updateGeoIp);
    const run = await world.pcsync(["apply", "--auto-approve", "-f", world.file, ...extra]);
    return { ...world, run };
  }

  it("says until when the first may still be applied, over a rollback or a hand edit made before then", async () => {
    const { emulator, run } = await applyWith(faults);
    try {
      expect(run.code, run.stderr).toBe(0);
      const until = /the service may still apply the first until (\S+) \(/.exec(run.stdout)?.[1];
      expect(until, run.stdout).toBeDefined();
      // Someone puts the record back at once (as a rollback would), before that moment...
      const put = await fetch(`${emulator.url}/api/projects/1/plugin_configs/1/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ description: null }),
      });
      expect(put.status).toBe(200);
      expect(Date.now()).toBeLessThan(Date.parse(until ?? ""));
      // ...and the apply's first PATCH lands over it, within the time the note gave.
      await emulator.idle();
      expect(Date.now()).toBeLessThanOrEqual(Date.parse(until ?? "") + 100);
      expect(emulator.snapshot().records.find((record) => record.id === 1)?.description).toBe("changed");
    } finally {
      await emulator.close();
    }
  }, 30_000);

  it("a rollback of its journal waits for it, so that the late PATCH cannot undo the rollback", async () => {
    const { emulator, run, pcsync } = await applyWith(faults, ["--journal", "apply.jsonl"]);
    try {
      expect(run.code, run.stderr).toBe(0);
      const until = /the service may still apply the first until (\S+) \(/.exec(run.stdout)?.[1];
      const rollback = await pcsync(["rollback", "--journal", "apply.jsonl", "--auto-approve"]);
      expect(rollback.code, rollback.stderr).toBe(0);
      expect(rollback.stderr).toContain(`the service may still apply the first until ${until}: waiting`);
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until ?? ""));
      await emulator.idle();
      expect(emulator.snapshot().records.find((record) => record.id === 1)?.description).toBeNull();
    } finally {
      await emulator.close();
    }
  }, 30_000);

  it("does not hold up the next apply: a late update is a rollback's concern, not a create's", async () => {
    const { emulator, run, pcsync, directory } = await applyWith(faults);
    try {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("may still apply the first until");
      const next = await writeManifest(directory, createsManifest(["Next one"]), "next.yaml");
      const again = await pcsync(["apply", "--auto-approve", "-f", next]);
      expect(again.code, again.stderr).toBe(0);
      // Before: "waiting 1.9 s before reading the state again", for the ended run's update.
      expect(again.stderr).not.toContain("waiting");
    } finally {
      await emulator.close();
    }
  }, 30_000);

  it("says nothing of the kind when every write was answered", async () => {
    const { emulator, run } = await applyWith({});
    try {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toContain("may still apply");
    } finally {
      await emulator.close();
    }
  }, 30_000);
});

describe("a create whose answer is lost, on posthog-2024", () => {
  it("is adopted with its empty description, which the list shows as the plugin's own text", async () => {
    const { emulator, file, pcsync } = await againstEmulator(
      { profile: "posthog-2024", faults: { dropWriteRate: 1 } },
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - name: Legacy S3",
        "          plugin: 5",
        "          description: null",
      ),
    );
    try {
      const run = await pcsync(["apply", "--auto-approve", "-f", file]);
      expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
      expect(run.stdout).toContain("Apply complete: 1 created");
      const records = emulator
        .snapshot()
        .records.filter((record) => record.project === 2 && record.name === "Legacy S3" && !record.deleted);
      expect(records.map((record) => record.description)).toEqual([null]);
      emulator.setFaults({});
      const plan = await pcsync(["plan", "-f", file, "--detailed-exitcode"]);
      expect(plan.code, plan.stdout).toBe(0);
    } finally {
      await emulator.close();
    }
  }, 30_000);
});

describe("a run killed while a write was in flight", () => {
  // Every write is held 2 s before it commits, even once its client is gone; the killed run's
  // request timeout is 0.6 s (every duration at 0.02), the resume's and rollback's wait 2.1 s.
  const held = { lateWriteRate: 1, lateWriteMs: 2_000 };

  /** The killed run's journal, where a rollback or resume is told to find it. */
  const KILLED_JOURNAL = ["--journal", "apply.jsonl"];

  /**
   * `pcsync ARGS` in its own process, killed with SIGKILL once its first write has been sent: once
   * a journal under `journalsIn` (from the world's directory) announces it.
   */
  async function killAtFirstWrite(
    world: Awaited<ReturnType<typeof againstEmulator>>,
    args: string[],
    journalsIn = ".",
  ) {
    const directory = join(world.directory, journalsIn);
    const { child, done } = spawnCli([...args, "--base-url", world.emulator.url], {
      cwd: world.directory,
      env: { PCSYNC_API_KEY: KEY, PCSYNC_TIME_SCALE: "0.02" },
    });
    for (;;) {
      const names = (await readdir(directory).catch(() => [] as string[])).filter((name) =>
        name.endsWith(".jsonl"),
      );
      const texts = await Promise.all(
        names.map((name) => readFile(join(directory, name), "utf8").catch(() => "")),
      );
      if (texts.some((text) => text.includes('"type":"intent"'))) break;
      await sleep(20);
    }
    // The intent line is on disk before its request is sent: give the request time to arrive.
    await sleep(300);
    child.kill("SIGKILL");
    expect((await done).signal).toBe("SIGKILL");
    world.emulator.setFaults({});
  }

  /**
   * `pcsync AGAIN` after the kill: it ends 0, saying it waited for the killed run's create of "Late
   * one", and the service holds that record once. Before, it was created again and the killed
   * run's POST landed too: two records.
   */
  async function expectCreatedOnce(world: Awaited<ReturnType<typeof againstEmulator>>, again: string[]) {
    const run = await world.pcsync(again);
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stderr).toContain('not answered (create "Late one" in project 1 plugin_configs)');
    await world.emulator.idle();
    expect(world.emulator.snapshot().records.filter((record) => record.name === "Late one")).toHaveLength(1);
    return run;
  }

  it("is not created twice by the next apply of the manifest in that directory: it waits for the create first", async () => {
    const world = await againstEmulator({ faults: held }, createsManifest(["Late one"]));
    try {
      // The killed run keeps its journal where the next apply looks: the default directory.
      const apply = ["apply", "--auto-approve", "-f", world.file];
      await killAtFirstWrite(world, apply, join(".pcsync", "journal"));
      const again = await expectCreatedOnce(world, apply);
      expect(again.stdout).toContain("No changes");
    } finally {
      await world.emulator.close();
    }
  }, 30_000);

  it("is not undone afterwards by that write: a rollback at once waits for it first", async () => {
    const world = await againstEmulator({ faults: held }, updateGeoIp);
    try {
      await killAtFirstWrite(world, ["apply", "--auto-approve", "-f", world.file, ...KILLED_JOURNAL]);
      const rollback = await world.pcsync(["rollback", ...KILLED_JOURNAL, "--auto-approve"]);
      expect(rollback.code, `${rollback.stdout}${rollback.stderr}`).toBe(0);
      expect(rollback.stderr).toContain(
        'the run that wrote the journal was stopped with 1 write begun and not answered (update "GeoIP" in project 1 plugin_configs), and the service may still apply it until',
      );
      await world.emulator.idle();
      // Before: "Nothing to roll back", then the killed run's PATCH landed and stayed.
      expect(world.emulator.snapshot().records.find((record) => record.id === 1)?.description).toBeNull();
    } finally {
      await world.emulator.close();
    }
  }, 30_000);

  it("is not created twice by a watcher's next heal after a restart: it waits for the create first", async () => {
    const world = await againstEmulator({ faults: held }, createsManifest(["Late one"]));
    try {
      const heal = ["watch", "--mode", "heal", "--once", "-f", world.file];
      await killAtFirstWrite(world, heal, join(".pcsync", "journal"));
      await expectCreatedOnce(world, heal);
    } finally {
      await world.emulator.close();
    }
  }, 30_000);

  it("is not created twice by a rollout applied again, its journals kept with --journal", async () => {
    const rollout = [
      "rollout:",
      "  waves:",
      "    - name: canary",
      '      projects: ["1"]',
      "    - name: rest",
      "      percent: 100",
      "  bake: 0s",
      "  health:",
      "    logs:",
      "      min_entries: 0",
    ].join("\n");
    const world = await againstEmulator({ faults: held }, `${createsManifest(["Late one"])}${rollout}\n`);
    try {
      const args = ["apply", "--auto-approve", "-f", world.file, "--journal", "rollout/run.jsonl"];
      // Its wave's journal, beside the rollout's, announces the create.
      await killAtFirstWrite(world, args, "rollout");
      const again = await expectCreatedOnce(world, args);
      // Planned once it landed: nothing created again, no copy to remove.
      expect(again.stdout).not.toContain("duplicates removed");
    } finally {
      await world.emulator.close();
    }
  }, 30_000);

  it("is undone when it was a create of an empty description, on posthog-2024 (which shows the plugin's text there)", async () => {
    const world = await againstEmulator(
      { profile: "posthog-2024", faults: held },
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - name: Late one",
        "          plugin: 5",
        "          description: null",
      ),
    );
    try {
      await killAtFirstWrite(world, ["apply", "--auto-approve", "-f", world.file, ...KILLED_JOURNAL]);
      await world.emulator.idle();
      const rollback = await world.pcsync(["rollback", ...KILLED_JOURNAL, "--auto-approve"]);
      // Before: refused (exit 3), "description is "Export events to ..." now; the run left null".
      expect(rollback.code, `${rollback.stdout}${rollback.stderr}`).toBe(0);
      const live = world.emulator
        .snapshot()
        .records.filter((record) => record.name === "Late one" && !record.deleted);
      expect(live).toEqual([]);
    } finally {
      await world.emulator.close();
    }
  }, 30_000);

  it("is not created twice by a resume: the resume reads what is left once the create can no longer land", async () => {
    const world = await againstEmulator({ faults: held }, createsManifest(["Late one"]));
    try {
      const planned = await world.pcsync(["plan", "-f", world.file, "-o", "plan.json"]);
      expect(planned.code, planned.stderr).toBe(0);
      await killAtFirstWrite(world, ["apply", "--auto-approve", "--plan", "plan.json", ...KILLED_JOURNAL]);
      await expectCreatedOnce(world, [
        "apply",
        "--auto-approve",
        "--plan",
        "plan.json",
        "--resume",
        ...KILLED_JOURNAL,
      ]);
      expect((await world.pcsync(["plan", "-f", world.file, "--detailed-exitcode"])).code).toBe(0);
    } finally {
      await world.emulator.close();
    }
  }, 30_000);
});
