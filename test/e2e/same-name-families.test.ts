// A plugin config that shares its name with a frontend app, end to end on both profiles: on
// posthog-2024 plugin_configs also lists the frontend apps, and no command may take the app for the
// config (plan, apply, a saved plan applied after the app was made, a rollback that brings the
// config back).

import { readdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { type EmulatorOptions, PROFILE_NAMES, startEmulator } from "../../src/emulator/index.js";
import { runBuiltCli, spawnCli } from "../support/cli.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const KEY = "phx_same_name_0123456789abcdef0123";
type OnFinished = TestContext["onTestFinished"];

/** Each test's own clean-up, its steps in reverse order (the tests run side by side). */
function cleanupWith(finished: OnFinished, ...steps: Array<() => Promise<void>>): void {
  finished(async () => {
    for (const step of steps.reverse()) await step();
  });
}

/** An emulator, a folder, and the built CLI run in that folder against it; both gone when the test ends. */
async function emulatorAndFolder(finished: OnFinished, options: Pick<EmulatorOptions, "profile" | "faults">) {
  const emulator = await startEmulator({ ...options, keys: [{ key: KEY, scopes: null, projects: "*" }] });
  const directory = await temporaryDirectory();
  cleanupWith(
    finished,
    () => emulator.close(),
    () => directory.remove(),
  );
  const env = { PCSYNC_API_KEY: KEY, PCSYNC_BASE_URL: emulator.url };
  const pcsync = (...args: string[]) => runBuiltCli(args, { env, cwd: directory.path });
  return { emulator, directory: directory.path, env, pcsync };
}

const APP = [
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - { name: Banner, plugin: 40, enabled: true }",
];
const CONFIG = (extra: string) => [
  "    plugin_configs:",
  "      configs:",
  `        - { name: Banner, plugin: 9${extra} }`,
];
const manifest = (...blocks: string[][]) =>
  ["version: 1", "projects:", '  "2":', ...blocks.flat()].join("\n");

describe.concurrent.each(PROFILE_NAMES)("a plugin config named like a frontend app (%s)", (profile) => {
  it("is its own record in plan, apply, a saved plan and a rollback; the app is never touched", async ({
    onTestFinished: finished,
  }) => {
    const { emulator, directory, pcsync } = await emulatorAndFolder(finished, { profile });
    const app = () =>
      emulator
        .snapshot()
        .records.filter(
          (record) => record.family === "pipeline_frontend_apps_configs" && record.project === 2,
        );
    const configs = () =>
      emulator
        .snapshot()
        .records.filter(
          (record) => record.family === "plugin_configs" && record.name === "Banner" && !record.deleted,
        );

    // A saved plan of the config, made before the app exists; then the app is made.
    const onlyConfig = await writeManifest(directory, manifest(CONFIG(", enabled: false")), "config.yaml");
    expect((await pcsync("plan", "-f", onlyConfig, "--out", "plan.json")).code).toBe(0);
    expect(
      (
        await pcsync(
          "apply",
          "-f",
          await writeManifest(directory, manifest(APP), "app.yaml"),
          "--auto-approve",
        )
      ).code,
    ).toBe(0);
    const [made] = app();
    expect(made).toMatchObject({ name: "Banner", plugin: 40, enabled: true });

    // The plan still stands, and makes the config beside the app.
    const applied = await pcsync("apply", "--plan", "plan.json");
    expect(applied.code, applied.stderr).toBe(0);
    expect(configs()).toEqual([expect.objectContaining({ plugin: 9, enabled: false })]);
    // Planned again from the manifest (the apps' family not in it), nothing is left to do.
    const again = await pcsync("plan", "-f", onlyConfig, "--detailed-exitcode");
    expect(again.code, again.stdout).toBe(0);

    // `deleted: true` deletes the config, not the app; its rollback brings the config back.
    const gone = await writeManifest(directory, manifest(CONFIG(", deleted: true")), "gone.yaml");
    const deleted = await pcsync("apply", "-f", gone, "--auto-approve", "--journal", "delete.jsonl");
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(configs()).toEqual([]);
    const rolledBack = await pcsync("rollback", "--journal", "delete.jsonl", "--auto-approve");
    expect(rolledBack.code, rolledBack.stderr).toBe(0);
    expect(configs()).toEqual([expect.objectContaining({ plugin: 9 })]);
    expect(app()).toEqual([made]);
  });
});

/** A config of plugin 1 (not a frontend app) asked of pipeline_frontend_apps_configs. */
const WRONG_FAMILY = [
  "version: 1",
  "projects:",
  '  "3":',
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - { name: Wrong Family, plugin: 1, enabled: true }",
].join("\n");

/** The wrong-family config beside the same config, rightly, under plugin_configs. */
const BOTH = [
  "version: 1",
  "projects:",
  '  "3":',
  "    plugin_configs:",
  "      configs:",
  "        - { name: Wrong Family, plugin: 1, enabled: true }",
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - { name: Wrong Family, plugin: 1, enabled: true }",
].join("\n");

/** A posthog-2024 emulator, a directory with `manifestText`, and the built CLI run in it. */
async function onPosthog2024(finished: OnFinished, manifestText: string) {
  const { emulator, directory, pcsync } = await emulatorAndFolder(finished, { profile: "posthog-2024" });
  const file = await writeManifest(directory, manifestText);
  return { emulator, pcsync, file, directory };
}

describe.concurrent("a config of a plugin that is not a frontend app, asked of pipeline_frontend_apps_configs on posthog-2024", () => {
  it("fails its create, leaves no record behind, and makes none on the next apply or heal", async ({
    onTestFinished: finished,
  }) => {
    // posthog-2024 keeps such a config and lists it under plugin_configs only: no plan would see it
    // and every apply would make another.
    const { emulator, pcsync, file, directory } = await onPosthog2024(finished, WRONG_FAMILY);
    const live = () =>
      emulator.snapshot().records.filter((record) => record.name === "Wrong Family" && !record.deleted);
    for (const run of [
      ["apply", "-f", file, "--auto-approve"],
      ["apply", "-f", file, "--auto-approve"],
      ["watch", "-f", file, "--once", "--mode", "heal"],
    ]) {
      const result = await pcsync(...run);
      expect(result.code, `${run.join(" ")}\n${result.stdout}\n${result.stderr}`).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toMatch(
        /lists it among the plugin_configs of project 3, not the pipeline_frontend_apps_configs: plugin 1 is not a frontend app .*; it was deleted again, so that no copy of it is left behind: manage this config under plugin_configs/,
      );
      expect(live()).toEqual([]);
    }
    // The heal made the record and took it back: nothing to undo, so no journal is kept or named
    // (kept, one a cycle, they would push a real heal's journal out of --keep-heal-journals).
    const heals = await readdir(join(directory, ".pcsync", "journal")).catch(() => []);
    expect(heals.filter((name) => name.endsWith("-heal.jsonl"))).toEqual([]);
  });
});

describe.concurrent("the same wrong-family config, when every POST commits and is answered 500 (posthog-2024)", () => {
  it("is found where the service put it, taken back, and never sent again: no copy is left", async ({
    onTestFinished: finished,
  }) => {
    const { emulator, directory, env } = await emulatorAndFolder(finished, {
      profile: "posthog-2024",
      faults: { commitThen500Rate: 1 },
    });
    const file = await writeManifest(
      directory,
      [
        "version: 1",
        "projects:",
        '  "3":',
        "    pipeline_frontend_apps_configs:",
        "      configs:",
        "        - { name: Committed Twice, plugin: 1, enabled: true }",
      ].join("\n"),
    );
    const applied = await runBuiltCli(["apply", "-f", file, "--auto-approve"], {
      env,
      cwd: directory,
      timeoutMs: 90_000,
    });
    expect(applied.code, applied.stderr).toBe(1);
    expect(`${applied.stdout}${applied.stderr}`).toMatch(/plugin 1 is not a frontend app/);
    const posts = emulator.requestLog.filter((entry) => entry.method === "POST");
    expect(posts).toHaveLength(1);
    expect(
      emulator.snapshot().records.filter((record) => record.name === "Committed Twice" && !record.deleted),
    ).toEqual([]);
  }, 120_000);
});

/**
 * An apply of `manifestText` on posthog-2024, through a proxy that holds the first request `hold`
 * picks (never answered, never sent on), killed -9 while it waits; `before` runs first, direct.
 */
async function killedWhileHeld(
  finished: OnFinished,
  manifestText: string,
  hold: (method: string, body: string) => boolean,
  before?: (direct: (...args: string[]) => ReturnType<typeof runBuiltCli>, cwd: string) => Promise<void>,
) {
  const emulator = await startEmulator({
    profile: "posthog-2024",
    keys: [{ key: KEY, scopes: null, projects: "*" }],
  });
  let holding = true;
  let held: () => void = () => {};
  const heldNow = new Promise<void>((resolve) => {
    held = resolve;
  });
  const proxy = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (holding && hold(request.method ?? "GET", body.toString())) {
      held();
      return; // never answered
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => name !== "host" && name !== "connection"),
    ) as Record<string, string>;
    const answer = await fetch(`${emulator.url}${request.url}`, {
      method: request.method ?? "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
    response.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const directory = await temporaryDirectory();
  cleanupWith(
    finished,
    () => emulator.close(),
    () => new Promise<void>((resolve) => proxy.close(() => resolve())),
    async () => proxy.closeAllConnections(),
    () => directory.remove(),
  );
  // Every wait for a killed run's writes at 1/20 (PCSYNC_TIME_SCALE).
  const env = { PCSYNC_API_KEY: KEY, PCSYNC_BASE_URL: url, PCSYNC_TIME_SCALE: "0.05" };
  const pcsync = (...args: string[]) => runBuiltCli(args, { env, cwd: directory.path });
  if (before)
    await before(
      (...args) =>
        runBuiltCli(args, {
          env: { ...env, PCSYNC_BASE_URL: emulator.url },
          cwd: directory.path,
        }),
      directory.path,
    );
  const file = await writeManifest(directory.path, manifestText);
  const planned = await pcsync("plan", "-f", file, "--out", "plan.json");
  expect(planned.code, planned.stderr).toBe(0);
  const killed = spawnCli(["apply", "--plan", "plan.json", "--journal", "run.jsonl"], {
    env,
    cwd: directory.path,
  });
  await heldNow;
  killed.child.kill("SIGKILL");
  await killed.done;
  holding = false;
  const live = () =>
    emulator
      .snapshot()
      .records.filter((record) => record.name === "Wrong Family" && !record.deleted)
      .map((record) => record.id);
  return { pcsync, live, file };
}

describe.concurrent("the same wrong-family config, its apply killed -9 before it took the record back (posthog-2024)", () => {
  // The proxy holds the first clean-up (the PATCH that deletes the record under plugin_configs)
  // unanswered, and the apply is killed while it waits.
  async function killedBeforeTakingBack(finished: OnFinished, manifestText = WRONG_FAMILY) {
    const killed = await killedWhileHeld(
      finished,
      manifestText,
      (method, body) => method === "PATCH" && body.includes('"deleted":true'),
    );
    expect(killed.live()).toHaveLength(1);
    return killed;
  }

  it("is taken back by the resume, which fails the create as the apply would have", async ({
    onTestFinished: finished,
  }) => {
    const { pcsync, live } = await killedBeforeTakingBack(finished);
    const [made] = live();
    const resumed = await pcsync("apply", "--plan", "plan.json", "--resume", "--journal", "run.jsonl");
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stdout + resumed.stderr).toContain(
      `it was deleted again (with record ${made}, made by an earlier run of this apply that was cut short), so that no copy of it is left behind: manage this config under plugin_configs`,
    );
    expect(live()).toEqual([]);
    // The whole journal, resume included, leaves nothing to undo.
    const rolledBack = await pcsync("rollback", "--journal", "run.jsonl", "--auto-approve");
    expect(rolledBack.code, rolledBack.stderr).toBe(0);
    expect(live()).toEqual([]);
  });

  it("is taken back by a new apply of the manifest, with the one it makes", async ({
    onTestFinished: finished,
  }) => {
    const { pcsync, live, file } = await killedBeforeTakingBack(finished);
    const [made] = live();
    const again = await pcsync("apply", "-f", file, "--auto-approve", "--journal", "again.jsonl");
    expect(again.code, again.stderr).toBe(1);
    expect(again.stdout).toContain(
      `(with record ${made}, made by an earlier run of this apply that was cut short)`,
    );
    expect(live()).toEqual([]);
  });

  it("stays gone after a rollback of the apply that took it back, its plugin_configs list read too", async ({
    onTestFinished: finished,
  }) => {
    // The manifest manages project 3's plugin_configs too: the new apply reads that list, and its
    // journal holds the killed run's record as it was before the take-back. A rollback of that
    // apply brought it back as a record the run deleted (the model-based test found it).
    const withList = WRONG_FAMILY.replace('  "3":\n', '  "3":\n    plugin_configs:\n      configs: []\n');
    expect(withList).toContain("plugin_configs:");
    const { pcsync, live, file } = await killedBeforeTakingBack(finished, withList);
    const [made] = live();
    const again = await pcsync("apply", "-f", file, "--auto-approve", "--journal", "again.jsonl");
    expect(again.code, again.stderr).toBe(1);
    expect(live()).toEqual([]);
    const undone = await pcsync("rollback", "--journal", "again.jsonl", "--auto-approve");
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stderr).toContain(
      `record ${made} ("Wrong Family") in project 3 plugin_configs was taken back by the run, as a copy an earlier run of it made: it is not brought back`,
    );
    expect(live()).toEqual([]);
  });

  it("is deleted by a rollback of the killed run, without --force", async ({ onTestFinished: finished }) => {
    const { pcsync, live } = await killedBeforeTakingBack(finished);
    const [made] = live();
    const rolledBack = await pcsync("rollback", "--journal", "run.jsonl", "--auto-approve");
    expect(rolledBack.code, rolledBack.stdout + rolledBack.stderr).toBe(0);
    // The write the kill left unanswered is named by its record, which has no name in the journal.
    expect(rolledBack.stderr).toContain(`(copy of record ${made} in project 3 plugin_configs)`);
    expect(rolledBack.stdout).toContain(`delete "Wrong Family" (id ${made})`);
    expect(live()).toEqual([]);
  });
});

describe.concurrent("the same wrong-family config beside its own plugin_configs record, its create never sent on (posthog-2024)", () => {
  // The manifest also manages the config, rightly, under plugin_configs. The apply's POST of the
  // wrong-family copy is held by the proxy (the service never sees it) and the apply killed -9:
  // its create went unanswered and made nothing. The plugin_configs record of that name and plugin
  // was there before the run: no rollback, resume or new apply may take it for that create's.
  const killedBeforeItsCreate = async (finished: OnFinished) => {
    let kept: number[] = [];
    const killed = await killedWhileHeld(
      finished,
      BOTH,
      (method) => method === "POST",
      async (direct, cwd) => {
        const own = await writeManifest(cwd, BOTH.split("\n").slice(0, 6).join("\n"), "own.yaml");
        const made = await direct("apply", "-f", own, "--auto-approve");
        expect(made.code, made.stderr).toBe(0);
      },
    );
    kept = killed.live();
    expect(kept).toHaveLength(1);
    return { ...killed, kept };
  };

  it("is not found by a rollback of the killed run, which leaves the plugin_configs record alone", async ({
    onTestFinished: finished,
  }) => {
    const { pcsync, live, kept } = await killedBeforeItsCreate(finished);
    const rolledBack = await pcsync("rollback", "--journal", "run.jsonl", "--auto-approve");
    expect(rolledBack.code, rolledBack.stdout + rolledBack.stderr).toBe(0);
    expect(rolledBack.stdout + rolledBack.stderr).toContain("so it was never made; nothing to undo");
    expect(live()).toEqual(kept);
  });

  it("is not taken back by a new apply or the resume: the plugin_configs record stays", async ({
    onTestFinished: finished,
  }) => {
    const { pcsync, live, kept, file } = await killedBeforeItsCreate(finished);
    const again = await pcsync("apply", "-f", file, "--auto-approve", "--journal", "again.jsonl");
    expect(again.code, again.stderr).toBe(1);
    expect(again.stdout + again.stderr).toMatch(/it was deleted again, so that no copy of it is left behind/);
    expect(live()).toEqual(kept);
    const resumed = await pcsync("apply", "--plan", "plan.json", "--resume", "--journal", "run.jsonl");
    expect(resumed.stdout + resumed.stderr).not.toMatch(/stale|changed since/);
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(live()).toEqual(kept);
  });
});

describe.concurrent("the same wrong-family config beside its own plugin_configs config, both made by one run (posthog-2024)", () => {
  it("keeps the plugin_configs record the run made, and takes back only the wrong-family one", async ({
    onTestFinished: finished,
  }) => {
    const { emulator, pcsync, file } = await onPosthog2024(finished, BOTH);
    const live = () =>
      emulator
        .snapshot()
        .records.filter((record) => record.name === "Wrong Family" && !record.deleted)
        .map((record) => ({ id: record.id, family: record.family }));
    const applied = await pcsync("apply", "-f", file, "--auto-approve");
    expect(applied.code, applied.stderr).toBe(1);
    expect(applied.stdout).toMatch(/it was deleted again, so that no copy of it is left behind/);
    const [kept] = live();
    expect(live()).toEqual([{ id: expect.any(Number), family: "plugin_configs" }]);
    // The next plan asks only for the config that cannot be made where it is asked.
    const planned = await pcsync("plan", "-f", file);
    expect(planned.stdout).toContain("Plan: 1 to create, 0 to update, 0 to delete, 0 to reorder.");
    expect(planned.stdout).not.toMatch(/project 3 \/ plugin_configs/);
    const again = await pcsync("apply", "-f", file, "--auto-approve");
    expect(again.code, again.stderr).toBe(1);
    expect(live()).toEqual([kept]);
  });

  it("killed -9 before it took the wrong-family record back: the resume keeps the plugin_configs record", async ({
    onTestFinished: finished,
  }) => {
    const { pcsync, live } = await killedWhileHeld(
      finished,
      BOTH,
      (method, body) => method === "PATCH" && body.includes('"deleted":true'),
    );
    expect(live()).toHaveLength(2);
    const [own] = live();
    const resumed = await pcsync("apply", "--plan", "plan.json", "--resume", "--journal", "run.jsonl");
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stdout + resumed.stderr).toMatch(
      /made by an earlier run of this apply that was cut short/,
    );
    expect(live()).toEqual([own]);
  });
});

describe.concurrent("the same wrong-family config in a rollout's second wave (posthog-2024)", () => {
  it("stops the rollout there and says which write failed and why, before the stop", async ({
    onTestFinished: finished,
  }) => {
    const { emulator, pcsync } = await onPosthog2024(
      finished,
      [
        "version: 1",
        "rollout:",
        "  waves:",
        '    - { name: canary, projects: ["2"] }',
        "    - { name: rest, percent: 100 }",
        "  bake: 0s",
        "  health: { logs: { min_entries: 0 } }",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: Roll Out, plugin: 1, enabled: true }",
        '  "3":',
        "    pipeline_frontend_apps_configs:",
        "      configs:",
        "        - { name: Wrong Family, plugin: 1, enabled: true }",
      ].join("\n"),
    );
    const applied = await pcsync("apply", "-f", "pcsync.yaml", "--auto-approve");
    expect(applied.code, applied.stderr).toBe(1);
    const failed = applied.stdout.indexOf('✗ failed: create "Wrong Family"');
    expect(failed, applied.stdout).toBeGreaterThan(0);
    expect(applied.stdout.slice(failed)).toMatch(/plugin 1 is not a frontend app/);
    expect(applied.stderr).toContain('the rollout stopped in wave "rest" because a write did not succeed');
    expect(
      emulator.snapshot().records.filter((record) => record.name === "Wrong Family" && !record.deleted),
    ).toEqual([]);
  });
});
