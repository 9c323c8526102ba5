// E2E: `pcsync watch --mode heal` with `rollout:` in the manifest, the built CLI against the
// emulator. Heal puts drift back as always, but a change to the manifest is not sent to the fleet
// at once by heal: it is held (reported as drift, refused by a guard) until `pcsync apply` has
// rolled it out in waves; after that, drift is healed again, to the new version.

import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli as runCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

const ROLLOUT = [
  "rollout:",
  "  waves:",
  "    - name: canary",
  '      projects: ["2"]',
  "    - name: rest",
  "      percent: 100",
  "  bake: 1s",
  "  health:",
  "    logs:",
  "      min_entries: 0",
];

/** Project 2's GeoIP (id 5 in the seed data), enabled, with this description; `rollout:` or not. */
function geoip(description: string | null, rollout: boolean): string {
  return manifest(
    "version: 1",
    ...(rollout ? ROLLOUT : []),
    "projects:",
    '  "2":',
    "    plugin_configs:",
    "      configs:",
    "        - name: GeoIP",
    "          plugin: 1",
    "          enabled: true",
    `          description: ${description === null ? "null" : JSON.stringify(description)}`,
  );
}

async function openReceiver(onFinished: (handler: () => Promise<void>) => void) {
  const events: { event: string; message?: string; summary?: string }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      events.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events };
}

/** Past the time a version must hold (bake 1s + --rollout-settle 2s) before heal learns it, with a margin. */
const LEARNT_MS = 4_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A watcher in heal mode every 300 ms (manifest used as written, versions learnt after bake +
 * 2 s), once it has found the fleet in sync and learnt it.
 */
async function watchInSync(
  file: string,
  env: NodeJS.ProcessEnv,
  onTestFinished: (handler: () => Promise<void>) => void,
) {
  const watcher = await startWatcher(
    [
      ...["-f", file, "--mode", "heal", "--interval", "300ms", "--jitter", "0"],
      ...["--manifest-settle", "0", "--rollout-settle", "2s"],
    ],
    { env, cwd: directory },
  );
  onTestFinished(async () => {
    watcher.signal("SIGKILL");
    await watcher.done;
  });
  const lastCycle = async () => (await watcher.cycles(1)).at(-1) ?? "";
  await expect.poll(lastCycle, { timeout: 20_000 }).toMatch(/ ok .*0 drifting/);
  await sleep(LEARNT_MS);
  return { watcher, lastCycle };
}

describe("pcsync watch --mode heal with rollout: in the manifest", { timeout: 90_000 }, () => {
  it("heals drift, holds a manifest change until apply has rolled it out, then heals to the new version", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openReceiver(onTestFinished);
    const file = join(directory, "watched.yaml");
    const current = (await server.list(2, "plugin_configs")).find((record) => record.id === 5);
    const before = (current?.description as string | null | undefined) ?? null;
    await writeSettled(file, geoip(before, true));
    const watcher = await startWatcher(
      [
        "-f",
        file,
        "--mode",
        "heal",
        "--interval",
        "300ms",
        "--jitter",
        "0",
        "--manifest-settle",
        "0",
        // Heal learns a version once it has held for the bake (1s) and this: 3 s in all.
        "--rollout-settle",
        "2s",
        "--webhook",
        receiver.url,
      ],
      { env: server.env, cwd: directory },
    );
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    const record = async () => (await server.list(2, "plugin_configs")).find((item) => item.id === 5);
    const events = (name: string) => receiver.events.filter((event) => event.event === name);

    // In sync first; then drift (someone disables it): healed, rollout or not.
    await expect
      .poll(() => /cycle \d+ ok .*0 drifting/.test(watcher.soFar().stdout), { timeout: 20_000 })
      .toBe(true);
    await sleep(LEARNT_MS);
    await server.call("PATCH", "/api/projects/2/plugin_configs/5/", { enabled: false });
    await expect.poll(async () => (await record())?.enabled, { timeout: 20_000 }).toBe(true);
    await expect.poll(() => events("healed").length, { timeout: 20_000 }).toBe(1);

    // The manifest changes: heal does not write it to the fleet, it says why, and keeps saying
    // there is drift.
    await writeSettled(file, geoip("v2", true));
    await expect.poll(() => events("guard_refused").length, { timeout: 20_000 }).toBe(1);
    expect(events("guard_refused")[0]?.message).toContain("`pcsync apply` rolls a change out in waves");
    const cyclesNow = (await watcher.cycles(1)).length;
    await watcher.cycles(cyclesNow + 3);
    expect((await record())?.description).toBe(before);
    expect(events("healed")).toHaveLength(1);
    expect((await watcher.cycles(1)).at(-1)).toMatch(
      /guarded .*1 drifting \(1 change\): 1 refused by a guard$/,
    );

    // apply rolls it out; the watcher then finds it in sync, and heals drift to the new version.
    const applied = await runCli(["apply", "-f", file, "--auto-approve"], {
      env: server.env,
      cwd: directory,
    });
    expect(applied.code, applied.stderr).toBe(0);
    expect(`${applied.stdout}${applied.stderr}`).toContain("Rollout complete");
    expect((await record())?.description).toBe("v2");
    await sleep(LEARNT_MS);
    await server.call("PATCH", "/api/projects/2/plugin_configs/5/", { enabled: false });
    await expect.poll(async () => (await record())?.enabled, { timeout: 20_000 }).toBe(true);
    expect((await record())?.description).toBe("v2");
    await expect.poll(() => events("healed").length, { timeout: 20_000 }).toBe(2);
  });

  it("--once heals a manifest change without rollout:, and with it holds it (exit 3), writing nothing", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "posthog-2024");
    const file = join(directory, "once.yaml");
    const record = async () => (await server.list(2, "plugin_configs")).find((item) => item.id === 5);

    await writeSettled(file, geoip("held", true));
    const held = await runCli(["watch", "--once", "--mode", "heal", "-f", file], {
      env: server.env,
      cwd: directory,
    });
    expect(held.code, held.stderr).toBe(3);
    expect(`${held.stdout}${held.stderr}`).toContain(
      "refused in project 2 plugin_configs: once.yaml:14: not healed: with `rollout:`, heal only puts back what this watcher has seen in sync for the rollout's bake and --rollout-settle in a row",
    );
    expect((await record())?.description).not.toBe("held");

    await writeSettled(file, geoip("healed", false));
    const healed = await runCli(["watch", "--once", "--mode", "heal", "-f", file], {
      env: server.env,
      cwd: directory,
    });
    expect(healed.code, healed.stderr).toBe(0);
    expect((await record())?.description).toBe("healed");
  });

  it("does not heal a wave that was rolled back to the change it rolled back", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = join(directory, "two.yaml");
    const partial = join(directory, "two-no-rollout.yaml");
    const journal = join(directory, "wave-1.jsonl");
    const describe = async (project: number, id: number) =>
      ((await server.list(project, "plugin_configs")).find((item) => item.id === id)?.description ?? null) as
        | string
        | null;
    /** GeoIP of projects 1 (id 1) and 2 (id 5), with this description. */
    const both = (description: string | null, rollout: boolean) =>
      manifest(
        "version: 1",
        ...(rollout ? ROLLOUT : []),
        "projects:",
        ...["1", "2"].flatMap((project) => [
          `  "${project}":`,
          "    plugin_configs:",
          "      configs:",
          "        - name: GeoIP",
          "          plugin: 1",
          `          description: ${description === null ? "null" : JSON.stringify(description)}`,
        ]),
      );
    const before = [await describe(1, 1), await describe(2, 5)];
    expect(before).toEqual([null, null]);
    await writeSettled(file, both(null, true));
    // --manifest-settle 0: the watcher plans with each version as soon as it is written.
    const { watcher, lastCycle } = await watchInSync(file, server.env, onTestFinished);

    // The change: its first wave (project 2) is written, the rest is held.
    await writeSettled(file, both("v2", true));
    await expect.poll(lastCycle, { timeout: 20_000 }).toMatch(/guarded .*2 drifting .*2 refused by a guard/);
    await writeFile(partial, both("v2", false));
    const wave = await runCli(
      ["apply", "-f", partial, "--project", "2", "--auto-approve", "--journal", journal],
      {
        env: server.env,
        cwd: directory,
      },
    );
    expect(wave.code, wave.stderr).toBe(0);
    const seen = (await watcher.cycles(1)).length;
    await watcher.cycles(seen + 2);
    expect(await lastCycle()).toMatch(/guarded .*1 drifting .*1 refused by a guard/);

    // The wave failed its health check and was rolled back: heal must not write it again.
    const undone = await runCli(["rollback", "--journal", journal, "--auto-approve"], {
      env: server.env,
      cwd: directory,
    });
    expect(undone.code, undone.stderr).toBe(0);
    expect(await describe(2, 5)).toBeNull();
    const after = (await watcher.cycles(1)).length;
    await watcher.cycles(after + 3);
    expect([await describe(1, 1), await describe(2, 5)]).toEqual([null, null]);
    expect(await lastCycle()).toMatch(/guarded .*2 drifting .*2 refused by a guard/);
  });

  it("does not heal the fleet back to a change whose last wave failed: in sync while it baked, then rolled back", async ({
    onTestFinished,
  }) => {
    // 600 entries a minute over a 1 s bake: a wave is judged on entries, as 60 a minute over 10 s.
    const server = await openServer(onTestFinished, "seed", {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      logRate: 600,
    });
    const file = join(directory, "last-wave.yaml");
    const describe = async (project: number, id: number) =>
      ((await server.list(project, "plugin_configs")).find((item) => item.id === id)?.description ?? null) as
        | string
        | null;
    /** GeoIP of projects 1 (id 1, the canary) and 2 (id 5, the last wave), enabled. */
    const fleet = (canary: string | null, last: string | null) =>
      manifest(
        "version: 1",
        "rollout:",
        "  waves:",
        "    - name: canary",
        '      projects: ["1"]',
        "    - name: rest",
        "      percent: 100",
        "  bake: 1s",
        "  health:",
        "    logs:",
        "      min_entries: 5",
        "projects:",
        ...[
          ["1", canary],
          ["2", last],
        ].flatMap(([project, description]) => [
          `  "${project}":`,
          "    plugin_configs:",
          "      configs:",
          "        - name: GeoIP",
          "          plugin: 1",
          "          enabled: true",
          `          description: ${description === null || description === undefined ? "null" : JSON.stringify(description)}`,
        ]),
      );
    const before = [await describe(1, 1), await describe(2, 5)];
    await server.call("PATCH", "/api/projects/1/plugin_configs/1/", { enabled: true });
    await server.call("PATCH", "/api/projects/2/plugin_configs/5/", { enabled: true });
    await writeSettled(file, fleet(before[0] ?? null, before[1] ?? null));
    const { watcher, lastCycle } = await watchInSync(file, server.env, onTestFinished);

    // The canary passes; the last wave breaks, and every wave is rolled back. While that wave
    // baked, every family was in sync with the change, for a few of the watcher's cycles.
    await writeSettled(file, fleet("v2", "v2 BROKEN"));
    const applied = await runCli(["apply", "-f", file, "--auto-approve"], {
      env: server.env,
      cwd: directory,
    });
    expect(applied.code, applied.stderr).toBe(4);
    expect(applied.stderr).toContain('rolling back wave "rest"');
    expect([await describe(1, 1), await describe(2, 5)]).toEqual(before);

    // Heal must not put the change that failed back on the fleet, however long it watches.
    const after = (await watcher.cycles(1)).length;
    await watcher.cycles(after + 10);
    await sleep(LEARNT_MS);
    expect([await describe(1, 1), await describe(2, 5)]).toEqual(before);
    expect(await lastCycle()).toMatch(/guarded .*2 drifting .*2 refused by a guard/);
  });
});
