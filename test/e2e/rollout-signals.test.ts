// E2E: Ctrl-C and SIGTERM end a rollout as they end `apply`, with a true account, wherever they
// land: in a bake (the wave's writes are made and journaled), in the read before a later wave (no
// journal, no write of that wave) or in a wave's writes (those in flight finish); applied again,
// the rollout finishes without writing anything twice. On both profiles.

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
import { openServer, type TestServer } from "../support/test-server.js";

const PROFILES = ["seed", "posthog-2024"] as const;

/** Applies the manifest again (no latency): it finishes the rollout; returns the writes per project. */
async function finish(server: TestServer, file: string, dir: string) {
  await server.emulator.idle();
  server.emulator.setFaults({});
  server.emulator.resetRequestLog();
  const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toContain("Resuming the rollout of .pcsync");
  expect(again.stdout).toContain("Rollout complete");
  return { again, writes: (project: string) => writesTo(server, [project]).length };
}

describe.concurrent.each(PROFILES)("a rollout stopped by a signal on %s", (profile) => {
  it("SIGTERM in a bake: exit 143, says the wave's writes are made; applied again, the wave is judged, not written again", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v21", threeWaveRollout("2s")));
    const [one, , three] = await geoipDescriptions(server);
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => run.soFar().stderr.includes('"canary": written and seen as planned; baking'),
      "the bake",
    );
    run.child.kill("SIGTERM");
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(143);
    expect(stopped.stderr).toMatch(
      /the rollout was stopped by SIGTERM in wave "canary" \(while it baked\): its writes are made and journaled, nothing more was written; apply the same manifest again to finish it \(rollout journal \.pcsync\/rollout\/[^)]+\.jsonl\)\./,
    );
    expect(await geoipDescriptions(server)).toEqual([one, "v21", three]);

    const { again, writes } = await finish(server, file, dir);
    expect(writes("2")).toBe(0);
    expect(writes("1")).toBe(1);
    expect(again.stderr).toMatch(/wave 1\/3 "canary": project 2 passes/);
    expect(await geoipDescriptions(server)).toEqual(["v21", "v21", "v21"]);
  }, 120_000);

  it("SIGINT in the read before a later wave: exit 130, nothing of that wave written, no journal for it; applied again, it finishes", async ({
    onTestFinished,
  }) => {
    // Every request takes 400 ms: the read of the second wave's project after the canary's bake
    // is under way when the signal comes.
    const server = await openServer(onTestFinished, profile, { faults: { latencyMs: 400 } });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v22", threeWaveRollout("2s")));
    const [one, , three] = await geoipDescriptions(server);
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(() => run.soFar().stderr.includes('"canary": healthy'), "the canary judged healthy");
    server.emulator.resetRequestLog();
    run.child.kill("SIGINT");
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(
      /the rollout was stopped by SIGINT before wave "second" was written \(while its projects were read again\): nothing of that wave or any later one was written; apply the same manifest again to finish it/,
    );
    // No wave was started: no journal announced, no write, no "undo this apply" for an empty one.
    expect(stopped.stderr).not.toContain('wave 2/3 "second": writing');
    expect(writesTo(server, ["1"])).toEqual([]);
    expect(await geoipDescriptions(server)).toEqual([one, "v22", three]);

    const { writes } = await finish(server, file, dir);
    expect(writes("2")).toBe(0);
    expect(writes("1")).toBe(1);
    expect(writes("3")).toBe(1);
    expect(await geoipDescriptions(server)).toEqual(["v22", "v22", "v22"]);
  }, 120_000);

  it("SIGINT in a wave's writes: the write in flight finishes, exit 130 with what was done; applied again, nothing is written twice", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, { faults: { latencyMs: 400 } });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v23", threeWaveRollout("2s")));
    const [one, , three] = await geoipDescriptions(server);
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => server.emulator.requestLog.some((entry) => entry.method === "PATCH"),
      "the canary's write",
    );
    run.child.kill("SIGINT");
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toMatch(
      /the rollout was stopped by SIGINT in wave "canary" \(after its writes, before they were all read again\): its writes are made and journaled, nothing more was written; apply the same manifest again to finish it/,
    );
    expect(stopped.stderr).not.toContain("not sent");
    expect(await geoipDescriptions(server)).toEqual([one, "v23", three]);

    const { writes } = await finish(server, file, dir);
    expect(writes("2")).toBe(0);
    expect(await geoipDescriptions(server)).toEqual(["v23", "v23", "v23"]);
  }, 120_000);

  it("SIGTERM in the rollback of a halted rollout: exit 143, says what was and was not rolled back (JSON too); applied again, it is finished (exit 4)", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, {
      faults: { latencyMs: 400, logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const before = await geoipDescriptions(server);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest((project) => (project === "1" ? "v24 BROKEN" : "v24"), threeWaveRollout("2s")),
    );
    const run = spawnCli(["apply", "-f", file, "--auto-approve", "--format", "json"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(() => run.soFar().stderr.includes('rolling back wave "second"'), "the rollback");
    run.child.kill("SIGTERM");
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(143);
    // A true account: the wave being rolled back was stopped part-way, the canary was not rolled
    // back at all, and both may still hold the change (an adversarial pass found "what was
    // rolled back is journaled" where nothing was).
    expect(stopped.stderr).toMatch(
      /the rollout halted in wave "second" and was stopped by SIGTERM while its waves were rolled back: no wave was rolled back yet; the rollback of wave "second" was stopped part-way \(what it undid is in its journal\), so it may still hold the change, and wave "canary" still holds it; apply the same manifest again to finish the rollback \(rollout journal \.pcsync\/rollout\/[^)]+\.jsonl\)\./,
    );
    expect(stopped.stderr).toMatch(
      /Rollout halted in wave "second": failing projects:\n {2}project 1: \d+ ERROR of/,
    );
    expect(stopped.stderr).toContain('  stopped by a signal while rolling back wave "second" (INCOMPLETE)');
    expect(stopped.stderr).toContain('  not rolled back: wave "canary" (it still holds the change)');
    const document = JSON.parse(stopped.stdout) as {
      rollout: {
        result: string;
        stage: string;
        failing: { project: string }[];
        stoppedIn: string;
        left: string[];
      };
    };
    expect(document.rollout).toMatchObject({
      result: "interrupted",
      stage: "rollback",
      stoppedIn: "second",
      left: ["canary"],
    });
    expect(document.rollout.failing.map((entry) => entry.project)).toEqual(["1"]);
    expect(stopped.stderr).not.toContain("not sent");

    await server.emulator.idle();
    server.emulator.setFaults({});
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(4);
    expect(again.stderr).toContain('it halted in wave "second", and its rollback is finished first');
    expect(again.stdout).toMatch(/rolled back wave "canary"/);
    expect(await geoipDescriptions(server)).toEqual(before);
  }, 120_000);

  it("a wave rolled back by hand while the rollout was stopped in its bake is written again when the rollout is resumed, not judged by what it no longer holds", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const [one, two, three] = await geoipDescriptions(server);
    const file = await write("pcsync.yaml", rolloutManifest("v25", threeWaveRollout("2s")));
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => run.soFar().stderr.includes('"canary": written and seen as planned; baking'),
      "the bake",
    );
    run.child.kill("SIGTERM");
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(143);
    const canaryJournal = /"canary": writing project 2; journal (\S+wave-1\.jsonl)/.exec(stopped.stderr)?.[1];
    expect(canaryJournal, stopped.stderr).toBeDefined();
    const undone = await server.run(["rollback", "--journal", canaryJournal ?? "", "--auto-approve"], {
      cwd: dir,
    });
    expect(undone.code, undone.stderr).toBe(0);
    expect(await geoipDescriptions(server)).toEqual([one, two, three]);

    server.emulator.resetRequestLog();
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(
      'wave 1/3 "canary": project 2 no longer as the wave wrote it (rolled back or changed since?): the wave is written again',
    );
    expect(writesTo(server, ["2"])).toHaveLength(1);
    expect(await geoipDescriptions(server)).toEqual(["v25", "v25", "v25"]);
    const plan = await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: dir });
    expect(plan.code, plan.stdout).toBe(0);
  }, 120_000);

  it("resumed after a project of a wave already judged healthy changed: the rollout finishes, then says that project's changes were not written (exit 1); applied again, a new rollout writes them", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v31", threeWaveRollout("2s")));
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(
      () => run.soFar().stderr.includes('"second": written and seen as planned; baking'),
      "the bake",
    );
    run.child.kill("SIGTERM");
    expect((await run.done).code).toBe(143);
    // Someone edits the canary's GeoIP (project 2), judged healthy already.
    const geoip = (await server.list("2", "plugin_configs")).find((record) => record.name === "GeoIP");
    await server.call("PATCH", `/api/projects/2/plugin_configs/${geoip?.id}/`, { description: "hotfix" });

    server.emulator.resetRequestLog();
    const resumed = await runSlow(server, ["apply", "-f", file, "--auto-approve", "--format", "json"], dir);
    expect(resumed.code, resumed.stderr).toBe(1);
    // The JSON document is printed, naming what was not written, before the error.
    expect(JSON.parse(resumed.stdout).rollout).toMatchObject({ result: "complete", notWritten: ["2"] });
    expect(resumed.stderr).toContain(
      "warning: the rollout this run finishes was planned by an earlier run, and none of its waves still to finish takes project 2",
    );
    expect(resumed.stderr).toContain("Rollout complete");
    expect(resumed.stderr).toMatch(
      /the rollout of \.pcsync\/rollout\/[^ ]+\.jsonl is complete, but .* none of its waves still to finish took project 2, where this run's plan has changes .*: nothing of them was written\. Apply the same manifest again: a new rollout writes them, from its first wave\./,
    );
    expect(resumed.stderr).not.toContain("Apply complete");
    expect(writesTo(server, ["2"])).toEqual([]);
    expect(await geoipDescriptions(server)).toEqual(["v31", "hotfix", "v31"]);

    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('wave 1/3 "canary": writing project 2');
    expect(await geoipDescriptions(server)).toEqual(["v31", "v31", "v31"]);
  }, 120_000);
});
