// E2E: a rollout killed (kill -9) in a wave's writes, or in the rollback of a halted rollout, and
// applied again finishes what it started: nothing written twice, the wave cut short baked and
// judged before the next starts, the rollback finished. And a wave's rollback that would give a name
// to two live records is refused, as `pcsync rollback` refuses it, and the rollout says it is not
// finished. The emulator's latency opens the window to kill in; on both profiles.

import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import {
  geoipDescriptions,
  rolloutManifest,
  rolloutWorkDir,
  runSlow,
  threeWaveRollout,
  waitFor,
  writesTo,
} from "../support/rollout-setup.js";
import { openServer } from "../support/test-server.js";

const PROFILES = ["seed", "posthog-2024"] as const;

/**
 * A run after a kill waits for the writes the killed one announced and had no answer to (3.5 x
 * --timeout at most: 105 s at the defaults): every duration of the client at 1/20 (not the bakes,
 * which the manifest gives).
 */
const AFTER_KILL = { PCSYNC_TIME_SCALE: "0.05" };

describe.concurrent.each(PROFILES)("a rollout killed with SIGKILL on %s", (profile) => {
  it("in a wave's writes: applied again, it writes only what is left, bakes and judges that wave, then the next", async ({
    onTestFinished,
  }) => {
    // Every request takes 150 ms, and one at a time (--concurrency 1): a kill just after the
    // canary's first write lands before its second.
    const server = await openServer(onTestFinished, profile, { faults: { latencyMs: 150 } });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest(
        () => "v8",
        [
          "rollout:",
          "  waves:",
          "    - name: canary",
          '      projects: ["2", "3"]',
          "    - name: rest",
          "      percent: 100",
          "  bake: 1s",
          "  health:",
          "    logs:",
          "      min_entries: 0",
        ],
      ),
    );
    const run = spawnCli(["apply", "-f", file, "--auto-approve", "--concurrency", "1"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(() => writesTo(server, ["2", "3"]).length > 0, "the canary's first write");
    run.child.kill("SIGKILL");
    expect((await run.done).signal).toBe("SIGKILL");
    // The killed run's last request may still be in the emulator (its latency): let it land first.
    await server.emulator.idle();
    server.emulator.setFaults({});
    const [oneAfterKill, twoAfterKill, threeAfterKill] = await geoipDescriptions(server);
    // The canary was cut short: one of its projects written, the other not; the next wave untouched.
    expect([twoAfterKill, threeAfterKill].filter((description) => description === "v8")).toHaveLength(1);
    expect(oneAfterKill).not.toBe("v8");
    const writtenFirst = twoAfterKill === "v8" ? "2" : "3";
    const leftOver = writtenFirst === "2" ? "3" : "2";

    // The plan says that apply finishes this rollout, and where it stopped.
    const planned = await runSlow(server, ["plan", "-f", file], dir, AFTER_KILL);
    expect(planned.stderr).toMatch(
      /^note: apply finishes the rollout of this manifest that did not end \(rollout journal \.pcsync\/rollout\/\S+\.jsonl\): it stopped in wave 1 "canary", cut short in its writes: apply writes the rest of it, then bakes and judges it before the next wave/m,
    );
    // So does a dry run, which writes nothing.
    const dry = await runSlow(server, ["apply", "-f", file, "--dry-run"], dir, AFTER_KILL);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/^note: apply finishes the rollout of this manifest that did not end/m);

    server.emulator.resetRequestLog();
    const resumed = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("Resuming the rollout of .pcsync");
    // Said before the writes (on a terminal, before the question).
    expect(
      resumed.stderr.indexOf("note: apply finishes the rollout of this manifest"),
    ).toBeGreaterThanOrEqual(0);
    expect(resumed.stderr.indexOf("note: apply finishes the rollout")).toBeLessThan(
      resumed.stderr.indexOf(": writing"),
    );
    // What was written is not written again; what was left of the canary is, once.
    expect(writesTo(server, [writtenFirst])).toEqual([]);
    expect(writesTo(server, [leftOver])).toHaveLength(1);
    expect(writesTo(server, ["1"])).toHaveLength(1);
    // The cut-short canary was baked and judged (both its projects) before the next wave started.
    const baked = resumed.stderr.indexOf('wave 1/2 "canary": written and seen as planned; baking');
    const judged = Math.max(
      resumed.stderr.indexOf('wave 1/2 "canary": project 2 passes'),
      resumed.stderr.indexOf('wave 1/2 "canary": project 3 passes'),
    );
    const next = resumed.stderr.indexOf('wave 2/2 "rest": writing');
    expect(baked).toBeGreaterThanOrEqual(0);
    expect(resumed.stderr).toContain('wave 1/2 "canary": project 2 passes');
    expect(resumed.stderr).toContain('wave 1/2 "canary": project 3 passes');
    expect(judged).toBeGreaterThan(baked);
    expect(next).toBeGreaterThan(judged);
    expect(resumed.stdout).toContain("Rollout complete");
    expect(await geoipDescriptions(server)).toEqual(["v8", "v8", "v8"]);
  }, 120_000);

  it("in the rollback of a halted rollout: applied again, it finishes the rollback and writes no wave", async ({
    onTestFinished,
  }) => {
    const logErrors = [{ description: "BROKEN", ratio: 0.8 }];
    const server = await openServer(onTestFinished, profile, { faults: { logErrors } });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const before = await geoipDescriptions(server);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest((project) => (project === "1" ? "v9 BROKEN" : "v9"), threeWaveRollout("2s")),
    );
    const run = spawnCli(["apply", "-f", file, "--auto-approve", "--concurrency", "1"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    // Slowed once the second wave bakes, so that the rollback (newest wave first) is killed after
    // it undid the second wave and before it undid the canary.
    await waitFor(
      () => run.soFar().stderr.includes('wave 2/3 "second": written and seen as planned; baking'),
      "the second wave bake",
    );
    server.emulator.setFaults({ logErrors, latencyMs: 150 });
    await waitFor(() => run.soFar().stderr.includes('rolling back wave "second"'), "the rollback start");
    const from = server.emulator.requestLog.length;
    await waitFor(() => writesTo(server, ["1"], from).length > 0, "the second wave's rollback write");
    run.child.kill("SIGKILL");
    const killed = await run.done;
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    await server.emulator.idle();
    server.emulator.setFaults({ logErrors });
    const [oneAfterKill, twoAfterKill, threeAfterKill] = await geoipDescriptions(server);
    expect(oneAfterKill).toBe(before[0]);
    expect(twoAfterKill).toBe("v9");
    expect(threeAfterKill).toBe(before[2]);

    const planned = await runSlow(server, ["plan", "-f", file], dir, AFTER_KILL);
    expect(planned.stderr).toMatch(
      /^note: apply finishes the rollback of this manifest's rollout, halted in wave 2 "second" \(rollout journal \S+\), and writes nothing else$/m,
    );

    server.emulator.resetRequestLog();
    const resumed = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(resumed.code, resumed.stderr).toBe(4);
    expect(resumed.stderr).toContain('it halted in wave "second", and its rollback is finished first');
    // No wave is written again; the second wave's undo is not made twice; the canary's is made.
    expect(resumed.stderr).not.toMatch(/": writing/);
    expect(writesTo(server, ["1", "3"])).toEqual([]);
    expect(writesTo(server, ["2"])).toHaveLength(1);
    expect(resumed.stdout).toContain('Rollout halted in wave "second"');
    expect(resumed.stdout).toMatch(/rolled back wave "canary": 1 change undone/);
    expect(resumed.stderr).toContain("every wave applied was rolled back");
    expect(await geoipDescriptions(server)).toEqual(before);

    // The rollout ended: the same manifest applied again starts a new one (which halts again).
    const third = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(third.stderr).not.toContain("Resuming");
    expect(third.code, third.stderr).toBe(4);
  }, 120_000);
});

describe.concurrent.each(PROFILES)("a wave's rollback on %s", (profile) => {
  it("refuses to bring back a record whose name another live record holds now, and the rollout says it is not finished", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const made = await server.call("POST", "/api/projects/2/plugin_configs/", {
      plugin: 1,
      order: 7,
      name: "Legacy",
    });
    expect(made.status).toBe(201);
    const before = await geoipDescriptions(server);
    // The canary deletes Legacy and changes GeoIP in project 2, then fails its check (too few
    // entries in the bake); while it bakes someone creates another "Legacy".
    const text = rolloutManifest(
      () => "v10",
      [
        "rollout:",
        "  waves:",
        "    - name: canary",
        '      projects: ["2"]',
        "    - name: rest",
        "      percent: 100",
        "  bake: 2s",
        "  health:",
        "    logs:",
        "      min_entries: 1000",
      ],
    ).replace(
      /( {2}"2":\n[\s\S]*?description: v10\n)/,
      "$1        - name: Legacy\n          plugin: 1\n          deleted: true\n",
    );
    const file = await write("pcsync.yaml", text);
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => run.soFar().stderr.includes('"canary": written and seen as planned; baking'),
      "the canary bake",
    );
    const taken = await server.call("POST", "/api/projects/2/plugin_configs/", {
      plugin: 1,
      order: 8,
      name: "Legacy",
    });
    expect(taken.status).toBe(201);
    const halted = await run.done;
    expect(halted.code, halted.stderr).toBe(4);
    expect(halted.stdout).toContain('Rollout halted in wave "canary"');
    expect(halted.stdout).toMatch(
      /rolled back wave "canary": not rolled back: it would give 1 name to two live records; see `pcsync rollback --journal \S+ --dry-run` \(INCOMPLETE\)/,
    );
    expect(halted.stderr).toMatch(/the rollback is incomplete: apply the same manifest again to finish it/);
    // Nothing was undone: the canary's change stands, and no later wave was written.
    expect(await geoipDescriptions(server)).toEqual([before[0], "v10", before[2]]);

    // Once the name is free again, the same manifest applied again finishes the rollback.
    const newId = (taken.body as { id: number }).id;
    await server.call("PATCH", `/api/projects/2/plugin_configs/${newId}/`, { name: "Legacy 2" });
    const finished = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(finished.code, finished.stderr).toBe(4);
    expect(finished.stderr).toContain("Resuming the rollout");
    expect(finished.stdout).toMatch(/rolled back wave "canary": 2 changes undone/);
    expect(await geoipDescriptions(server)).toEqual(before);
    const legacy = (await server.list(2, "plugin_configs")).filter((record) => record.name === "Legacy");
    expect(legacy.map((record) => record.id)).toEqual([(made.body as { id: number }).id]);
  }, 120_000);

  it("does not put a wave back over a record changed since: it says how to finish by hand, and then applying again ends the rollout", async ({
    onTestFinished,
  }) => {
    // 600 entries a minute over a 2 s bake: enough to judge, as 60 a minute over the 10 s users start with.
    const server = await openServer(onTestFinished, profile, {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      logRate: 600,
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const before = await geoipDescriptions(server);
    // The canary (project 2) passes; the second wave (project 1) breaks. While it bakes, someone
    // edits the record the canary wrote, which its rollback would put back.
    const file = await write(
      "pcsync.yaml",
      rolloutManifest((project) => (project === "1" ? "v13 BROKEN" : "v13"), threeWaveRollout("2s")),
    );
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => run.soFar().stderr.includes('"second": written and seen as planned; baking'),
      "the second wave's bake",
    );
    const geoip = (await server.list(2, "plugin_configs")).find((record) => record.name === "GeoIP");
    // The edit also switches the plugin off, a field the wave never sent: the forced rollback leaves
    // it as it is, and it must not hold the rollout's rollback up for ever after (a pass found that).
    await server.call("PATCH", `/api/projects/2/plugin_configs/${geoip?.id}/`, {
      description: "hand edit",
      enabled: false,
    });
    const halted = await run.done;
    expect(halted.code, halted.stderr).toBe(4);
    expect(halted.stdout).toMatch(
      /rolled back wave "canary": not rolled back: 1 record was changed since by someone else; .*\(INCOMPLETE\)/,
    );
    // Applying again would meet the same edit: the way out is named, not "apply again" alone.
    const command = halted.stderr.match(/finish the rollback with (pcsync rollback --journal (\S+) --force)/);
    expect(command, halted.stderr).not.toBeNull();
    expect(halted.stderr).toContain("then apply the same manifest again to finish it");
    // The second wave was rolled back; the canary's record keeps the hand edit.
    expect(await geoipDescriptions(server)).toEqual([before[0], "hand edit", before[2]]);

    const forced = await runSlow(
      server,
      ["rollback", "--journal", command?.[2] ?? "", "--force", "--auto-approve"],
      dir,
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(await geoipDescriptions(server)).toEqual(before);
    const finished = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(finished.code, finished.stderr).toBe(4);
    expect(finished.stderr).toContain("Resuming the rollout");
    expect(finished.stderr).not.toContain("the rollback is incomplete");
    expect(await geoipDescriptions(server)).toEqual(before);
    // The rollout ended: the next apply starts a new one.
    const next = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, AFTER_KILL);
    expect(next.stderr).not.toContain("Resuming");
  }, 120_000);
});
