// E2E: `rollout:` in a manifest. plan shows the waves; apply writes them one at a time, each re-read,
// baked and judged on its plugin configs' logs; a wave that fails halts the rollout (exit 4) and
// rolls back what was applied; a rollout killed in a bake finishes when applied again, writing
// nothing twice. Against the emulator, on both profiles.

import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import {
  geoipDescriptions,
  rolloutManifest,
  rolloutWorkDir,
  runSlow,
  threeWaveRollout,
  webhookReceiver,
} from "../support/rollout-setup.js";
import { openServer } from "../support/test-server.js";

const PROFILES = ["seed", "posthog-2024"] as const;

const WAVES = [
  "rollout:",
  "  waves:",
  "    - name: canary",
  '      projects: ["2"]',
  "    - name: rest",
  "      percent: 100",
];

/** The projects in the order apply wrote their waves, from its progress lines. */
function wavesWritten(stderr: string): string[] {
  return [
    ...stderr.matchAll(/rollout: wave \d+\/\d+ "([^"]+)": writing (?:project|\d+ projects:) ([^;]+);/g),
  ].map((match) => `${match[1]}: ${match[2]}`);
}

describe.concurrent.each(PROFILES)("rollout on %s", (profile) => {
  it("plan shows the waves, apply writes them in that order, and the next plan is empty", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest("v2", [...WAVES, "  bake: 1s", "  health:", "    logs:", "      min_entries: 0"]),
    );
    const shown = await server.run(["plan", "-f", file], { cwd: dir });
    expect(shown.stdout).toMatch(/Rollout in 2 waves, each baked 1s/);
    expect(shown.stdout).toContain("1. canary: project 2");
    const json = await server.run(["plan", "-f", file, "--format", "json"], { cwd: dir });
    const planned = (
      JSON.parse(json.stdout) as { rollout: { waves: { name: string; projects: string[] }[] } }
    ).rollout.waves;
    expect(planned[0]).toEqual({ name: "canary", projects: ["2"] });
    expect(planned.flatMap((wave) => wave.projects).sort()).toEqual(["1", "2", "3"]);
    const markdown = await server.run(["plan", "-f", file, "--format", "markdown"], { cwd: dir });
    expect(markdown.stdout).toContain("| 1. canary | project 2 |");
    // Saved, it is for review: the line says how to apply it, and that is not `apply --plan`.
    const saved = await server.run(["plan", "-f", file, "-o", "plan.json"], { cwd: dir });
    expect(saved.stderr).toContain(
      "Saved the plan to plan.json, for review: it rolls out in waves, so apply the manifest it was made from with: pcsync apply -f MANIFEST",
    );
    expect(saved.stderr).not.toContain("pcsync apply --plan plan.json");

    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.stderr).not.toMatch(/internal error/);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("Rollout complete");
    // The waves apply wrote are the plan's, in its order; each was judged before the next.
    expect(wavesWritten(applied.stderr)).toEqual(
      planned
        .filter((wave) => wave.projects.length > 0)
        .map((wave) => `${wave.name}: ${wave.projects.join(", ")}`),
    );
    const canaryJudged = applied.stderr.indexOf('wave 1/2 "canary": project 2 passes');
    expect(canaryJudged).toBeGreaterThan(0);
    expect(applied.stderr.indexOf('wave 2/2 "rest": writing')).toBeGreaterThan(canaryJudged);
    expect(await geoipDescriptions(server)).toEqual(["v2", "v2", "v2"]);
    const again = await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("Rollout in");

    // --format json: stdout is the JSON document alone, the rollout's end in it; the words on stderr.
    const next = await write(
      "next.yaml",
      rolloutManifest("v4", [...WAVES, "  bake: 1s", "  health:", "    logs:", "      min_entries: 0"]),
    );
    const asJson = await runSlow(server, ["apply", "-f", next, "--auto-approve", "--format", "json"], dir);
    expect(asJson.code, asJson.stderr).toBe(0);
    const document = JSON.parse(asJson.stdout) as { result: { done: number }; rollout: { result: string } };
    expect(document.result.done).toBe(3);
    expect(document.rollout).toMatchObject({ result: "complete" });
    expect(asJson.stderr).toContain("Rollout complete");
  }, 90_000);

  it("a second apply of the manifest while its rollout runs is refused (exit 3); the first finishes alone", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      // The first is stopped while the second runs (below), so its bake need not outlast the
      // second's start on a loaded machine.
      rolloutManifest("v5", [...WAVES, "  bake: 2s", "  health:", "    logs:", "      min_entries: 0"]),
    );
    const first = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await expect
      .poll(() => first.soFar().stderr, { timeout: 30_000 })
      .toMatch(/"canary": written and seen as planned; baking/);
    // Stopped (as a shell's ^Z does) while the second runs: on a loaded machine the second's start
    // could outlast the bake, and the rollout would end before the second asked for its journal.
    first.child.kill("SIGSTOP");
    // A plan meanwhile says the rollout is under way in that run, not that it stopped.
    const planned = await runSlow(server, ["plan", "-f", file], dir).catch((error: unknown) => {
      first.child.kill("SIGCONT");
      throw error;
    });
    expect(planned.stderr).toMatch(
      /^warning: a run drives this manifest's rollout now \(pid \d+ on host .*, apply \(rollout\), since .*; rollout journal \.pcsync\/rollout\/\S+\.jsonl\): apply refuses \(exit 3\) until it ends, and then finishes what it left$/m,
    );
    expect(planned.stderr).not.toContain("it stopped in wave");
    const second = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir).catch(
      (error: unknown) => {
        first.child.kill("SIGCONT");
        throw error;
      },
    );
    expect(second.code, second.stderr).toBe(3);
    expect(second.stderr).toMatch(
      /^pcsync: this manifest's rollout \(its change, on this server, from this directory\) is held by pid \d+ on host .* \(apply \(rollout\), since .*\): one run at a time drives a rollout, where a second would resume the journal the first still writes or start a rollout beside it\. Nothing was changed\./m,
    );
    // Nor by a run that --project narrows to a later wave's project: its manifest is another, but
    // it would write beside the rollout while the canary bakes (an adversarial pass found this).
    const narrowed = await runSlow(
      server,
      ["apply", "-f", file, "--project", "3", "--auto-approve"],
      dir,
    ).finally(() => first.child.kill("SIGCONT"));
    expect(narrowed.code, narrowed.stderr).toBe(3);
    expect(narrowed.stderr).toMatch(/^pcsync: this manifest's rollout .* is held by pid \d+/m);
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(wavesWritten(done.stderr).length).toBe(2);
    expect(await geoipDescriptions(server)).toEqual(["v5", "v5", "v5"]);
    // The lock went with the run: the next apply of the manifest runs (and finds nothing to do).
    const after = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(after.code, after.stderr).toBe(0);
  }, 90_000);

  it("the whole manifest's apply is refused (exit 3) while a run that --project narrows drives its part", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest("v6", [...WAVES, "  bake: 2s", "  health:", "    logs:", "      min_entries: 0"]),
    );
    const narrowed = spawnCli(["apply", "-f", file, "--project", "3", "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await expect
      .poll(() => narrowed.soFar().stderr, { timeout: 30_000 })
      .toMatch(/written and seen as planned; baking/);
    narrowed.child.kill("SIGSTOP");
    const whole = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir).finally(() =>
      narrowed.child.kill("SIGCONT"),
    );
    expect(whole.code, whole.stderr).toBe(3);
    expect(whole.stderr).toMatch(
      /^pcsync: this manifest's rollout .* is held by pid \d+ .*\(apply \(rollout, narrowed\)/m,
    );
    const done = await narrowed.done;
    expect(done.code, done.stderr).toBe(0);
    expect((await geoipDescriptions(server))[2]).toBe("v6");
  }, 90_000);

  it("with --exclude, a wave is seen as planned by the records it was to write; the excluded one is left", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      manifest(
        "version: 1",
        ...WAVES.map((line) => line.replace('["2"]', '["1"]')),
        "  bake: 1s",
        "  health:",
        "    logs:",
        "      min_entries: 0",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1, description: excluded-test }",
        "        - { name: Property Filter, plugin: 2, description: excluded-test }",
      ),
    );
    const applied = await runSlow(
      server,
      ["apply", "-f", file, "--exclude", "Property Filter", "--auto-approve"],
      dir,
    );
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("Rollout complete");
    const records = await server.list(1, "plugin_configs");
    const description = (name: string) => records.find((record) => record.name === name)?.description;
    expect(description("GeoIP")).toBe("excluded-test");
    expect(description("Property Filter")).not.toBe("excluded-test");
  }, 90_000);

  it("a wave that fails its health check halts the rollout, rolls back what it applied, and exits 4", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const before = await geoipDescriptions(server);
    // The canary's config logs nothing within the bake: fewer entries than min_entries is unknown,
    // which fails it.
    const file = await write(
      "pcsync.yaml",
      rolloutManifest("v3", [...WAVES, "  bake: 1s", "  health:", "    logs:", "      min_entries: 50"]),
    );
    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.code, applied.stderr).toBe(4);
    expect(applied.stdout).toContain('Rollout halted in wave "canary"');
    expect(applied.stdout).toMatch(
      /project 2: 0 ERROR of \d+ entries( \([\d.]+%\))? from 1 plugin config: fewer than min_entries 50/,
    );
    expect(applied.stdout).toMatch(/rolled back wave "canary": 1 change undone/);
    expect(applied.stderr).toContain("every wave applied was rolled back");
    // Nothing of a later wave was written, and the canary is as it was.
    expect(wavesWritten(applied.stderr)).toEqual(["canary: 2"]);
    expect(await geoipDescriptions(server)).toEqual(before);
    // The rollout's journal handed to rollback: its waves were undone already, none is undone again.
    const rolloutJournal = /Rollout journal: (\S+)/.exec(applied.stderr)?.[1] ?? "";
    const handed = await runSlow(server, ["rollback", "--journal", rolloutJournal, "--auto-approve"], dir);
    expect(handed.code, handed.stderr).toBe(0);
    expect(handed.stdout).toContain(
      "Nothing to roll back: the rollout halted, and every wave it wrote was rolled back.",
    );
    expect(await geoipDescriptions(server)).toEqual(before);

    // Applied again, the same manifest starts a new rollout, which halts the same way; with
    // --format json, stdout is the JSON document alone, which names the failing project.
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve", "--format", "json"], dir);
    expect(again.code, again.stderr).toBe(4);
    expect(await geoipDescriptions(server)).toEqual(before);
    const document = JSON.parse(again.stdout) as {
      rollout: {
        result: string;
        wave: string;
        failing: { project: string; status: string }[];
        undone: unknown[];
      };
    };
    expect(document.rollout).toMatchObject({ result: "halted", wave: "canary" });
    expect(document.rollout.failing).toEqual([expect.objectContaining({ project: "2", status: "unknown" })]);
    expect(document.rollout.undone).toEqual([expect.objectContaining({ wave: "canary", complete: true })]);
    expect(again.stderr).toContain('Rollout halted in wave "canary"');
  }, 90_000);

  it("on_failure: halt stops with the waves written, and says nothing was rolled back", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest("v4", [
        ...WAVES,
        "  bake: 0s",
        "  on_failure: halt",
        "  health:",
        "    logs:",
        "      min_entries: 50",
      ]),
    );
    const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(applied.code, applied.stderr).toBe(4);
    expect(applied.stdout).toContain("Nothing was rolled back (on_failure: halt)");
    const [one, two, three] = await geoipDescriptions(server);
    expect(two).toBe("v4");
    expect([one, three]).not.toContain("v4");

    // Undone by its journal, the halt no longer holds: the next apply rolls out from the canary.
    const rolloutJournal = /Rollout journal: (\S+)/.exec(applied.stderr)?.[1] ?? "";
    const undone = await runSlow(server, ["rollback", "--journal", rolloutJournal, "--auto-approve"], dir);
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stdout).toContain(
      'Rolled back the rollout (it halted): 1 wave undone, newest first: "canary".',
    );
    expect((await geoipDescriptions(server))[1]).not.toBe("v4");
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(4);
    expect(wavesWritten(again.stderr)).toEqual(["canary: 2"]);
  }, 90_000);

  it("killed with SIGKILL while a wave bakes, applied again, finishes without writing that wave twice", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest("v5", [...WAVES, "  bake: 2s", "  health:", "    logs:", "      min_entries: 0"]),
    );
    const before = await geoipDescriptions(server);
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 60_000,
    });
    for (let waited = 0; !run.soFar().stderr.includes("baking") && waited < 30_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run.soFar().stderr).toContain('wave 1/2 "canary": written and seen as planned; baking');
    run.child.kill("SIGKILL");
    expect((await run.done).signal).toBe("SIGKILL");
    await server.emulator.idle();
    const [firstAfterKill, canaryAfterKill, thirdAfterKill] = await geoipDescriptions(server);
    expect(canaryAfterKill).toBe("v5");
    expect([firstAfterKill, thirdAfterKill]).not.toContain("v5");
    // Handed to rollback, the rollout's journal is refused while the rollout has not ended: the
    // hint says how to finish it, or which wave journals undo it.
    const rolloutJournal = /Rollout journal: (\S+)/.exec(run.soFar().stderr)?.[1] ?? "";
    const early = await runSlow(server, ["rollback", "--journal", rolloutJournal, "--auto-approve"], dir);
    expect(early.code, early.stderr).toBe(1);
    expect(early.stderr).toContain("holds a rollout that did not end (killed, or stopped in a wave)");
    expect(early.stderr).toMatch(/pcsync rollback --journal \S+-wave-1\.jsonl/);
    expect(await geoipDescriptions(server)).toEqual([firstAfterKill, canaryAfterKill, thirdAfterKill]);

    server.emulator.resetRequestLog();
    const resumed = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("Resuming the rollout of .pcsync");
    // The canary was baked (what was left of it) and judged, never written again.
    expect(resumed.stderr).toMatch(/wave 1\/2 "canary": project 2 passes/);
    expect(wavesWritten(resumed.stderr)).toEqual([expect.stringMatching(/^rest: (1, 3|3, 1)$/)]);
    const writesToProject2 = server.emulator.requestLog.filter(
      (entry) => entry.method !== "GET" && entry.path.startsWith("/api/projects/2/"),
    );
    expect(writesToProject2).toEqual([]);
    expect(await geoipDescriptions(server)).toEqual(["v5", "v5", "v5"]);
    // The rollout's journal is ended: a third apply has nothing to do and resumes nothing.
    const third = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(third.code).toBe(0);
    expect(third.stderr).not.toContain("Resuming");

    // The whole rollout undone by its journal: the waves newest first, each through the journals it
    // wrote (the killed run's and the resume's), recorded, so that running it again undoes nothing.
    const undone = await runSlow(server, ["rollback", "--journal", rolloutJournal, "--auto-approve"], dir);
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stdout).toContain(
      'Rolled back the rollout (it completed): 2 waves undone, newest first: "rest", "canary".',
    );
    expect(await geoipDescriptions(server)).toEqual(before);
    const twice = await runSlow(server, ["rollback", "--journal", rolloutJournal, "--auto-approve"], dir);
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stdout).toContain("Nothing to roll back: the rollout completed, and every wave it wrote");
    expect(await geoipDescriptions(server)).toEqual(before);
  }, 120_000);
});

describe("a wave's re-read on posthog-2024, where plugin_configs also lists frontend apps", () => {
  it("is not fooled by a frontend app created during the rollout: the wave is seen as planned, nothing is pruned", async ({
    onTestFinished,
  }) => {
    // The re-read reads the families the wave changed; the frontend apps' list read at the start
    // tells which of plugin_configs' records are theirs. A frontend app made since looks like a
    // plugin config to prune, until its project is read whole again.
    const server = await openServer(onTestFinished, "posthog-2024");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const geoip = ["        - name: GeoIP", "          plugin: 1", "          description: v7"];
    const file = await write(
      "pcsync.yaml",
      manifest(
        "version: 1",
        ...WAVES,
        "  bake: 2s",
        "  health:",
        "    logs:",
        "      min_entries: 0",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        ...geoip,
        "        - name: Property Filter",
        "          plugin: 2",
        "        - name: Legacy S3",
        "          plugin: 5",
        ...["2", "3"].flatMap((project) => [
          `  "${project}":`,
          "    plugin_configs:",
          "      prune: true",
          "      configs:",
          ...geoip,
        ]),
      ),
    );
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    for (let waited = 0; !run.soFar().stderr.includes("baking") && waited < 30_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const made = await server.call("POST", "/api/projects/1/pipeline_frontend_apps_configs/", {
      plugin: 40,
      name: "Made During The Rollout",
      order: 9,
      enabled: true,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    server.emulator.resetRequestLog();
    const applied = await run.done;
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain("Rollout complete");
    // Project 1's frontend list was read again for it (by the check before the wave's writes and
    // by the re-read after them), and project 3's, where the wave creates GeoIP under
    // plugin_configs (that list tells whether a new record is a frontend app); project 2's, where
    // it only updates, was not.
    const frontendReads = server.emulator.requestLog.filter(
      (entry) => entry.method === "GET" && entry.path.includes("/pipeline_frontend_apps_configs/"),
    );
    expect(frontendReads.length).toBeGreaterThan(0);
    expect(new Set(frontendReads.map((entry) => entry.path.split("/")[3]))).toEqual(new Set(["1", "3"]));
    expect(await geoipDescriptions(server)).toEqual(["v7", "v7", "v7"]);
    const frontend = await server.list(1, "pipeline_frontend_apps_configs");
    expect(frontend.map((record) => record.name)).toContain("Made During The Rollout");
  }, 90_000);
});

describe.concurrent.each(PROFILES)("a rollout whose change breaks its plugins, on %s", (profile) => {
  it("halts in the wave that logs errors, writes no later wave, rolls back every wave newest first, and tells the webhook", async ({
    onTestFinished,
  }) => {
    // The service's plugins log a steady stream; a config whose description says BROKEN logs 80%
    // ERROR entries from its change on. The canary's change is sound, the next wave's is not.
    const server = await openServer(onTestFinished, profile, {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const receiver = await webhookReceiver(onTestFinished);
    const before = await geoipDescriptions(server);
    const text = rolloutManifest((project) => (project === "1" ? "v6 BROKEN" : "v6"), threeWaveRollout("3s"));
    const file = await write("pcsync.yaml", text);
    const applied = await runSlow(
      server,
      ["apply", "-f", file, "--auto-approve", "--webhook", receiver.url],
      dir,
    );
    expect(applied.code, applied.stderr).toBe(4);
    expect(applied.stderr).toMatch(/wave 1\/3 "canary": project 2 passes: 0 ERROR of \d+ entries/);
    expect(applied.stdout).toContain('Rollout halted in wave "second"');
    expect(applied.stdout).toMatch(
      /project 1: (\d+) ERROR of \d+ entries \(\d+(\.\d+)?%\) from 1 plugin config: over max_error_ratio 5%/,
    );
    // Nothing of the wave after the failing one was written; both waves written were undone.
    expect(wavesWritten(applied.stderr)).toEqual(["canary: 2", "second: 1"]);
    expect(applied.stdout).toMatch(/rolled back wave "second"[\s\S]*rolled back wave "canary"/);
    expect(await geoipDescriptions(server)).toEqual(before);
    expect(
      receiver.events.map((event) => `${event.event}${event.rollout ? ` ${event.rollout.wave}` : ""}`),
    ).toEqual([
      "rollout_wave_started canary",
      "rollout_wave_passed canary",
      "rollout_wave_started second",
      "rollout_halted second",
      "rollout_rolled_back second",
      "rollout_rolled_back canary",
    ]);
  }, 90_000);
});

describe("the rollout block", () => {
  it("is refused with file:line when two files set it, or a wave names a project the manifest lacks", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const first = await write("a.yaml", rolloutManifest("x", WAVES));
    const second = await write("b.yaml", manifest("version: 1", ...WAVES));
    const twice = await server.run(["validate", "-f", first, "-f", second], { cwd: dir });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/b\.yaml:2:1: rollout is also set at .*a\.yaml:2/);
    const unknown = await write(
      "c.yaml",
      rolloutManifest("x", ["rollout:", "  waves:", "    - name: canary", '      projects: ["9"]']),
    );
    const named = await server.run(["validate", "-f", unknown], { cwd: dir });
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(
      /c\.yaml:5:\d+: wave "canary" names project "9", which the manifest does not manage/,
    );
  });

  it("refuses a Prometheus gate with a user in its URL or a query without {{project}}, with file:line", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const prometheus = (url: string, query: string) =>
      rolloutManifest("x", [
        "rollout:",
        "  waves:",
        "    - name: all",
        "      percent: 100",
        "  health:",
        "    prometheus:",
        `      url: ${url}`,
        `      query: '${query}'`,
        "      max: 0",
      ]);
    const good = await write(
      "good.yaml",
      prometheus("http://prometheus:9090", 'sum(errors{p="{{project}}"})'),
    );
    const valid = await server.run(["validate", "-f", good], { cwd: dir });
    expect(valid.code, valid.stderr).toBe(0);
    const bad = await write(
      "bad.yaml",
      prometheus("http://admin:hunter2@prometheus:9090", "sum(errors{{ job }})"),
    );
    const refused = await server.run(["validate", "-f", bad], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bad\.yaml:8:\d+: prometheus url holds a user or password/);
    expect(refused.stderr).toMatch(/bad\.yaml:9:\d+: prometheus query holds \{\{job\}\}/);
    expect(refused.stderr).toMatch(/bad\.yaml:9:\d+: prometheus query holds no \{\{project\}\}/);
    expect(refused.stderr).not.toContain("hunter2");
    const missing = await write(
      "missing.yaml",
      prometheus("http://prometheus:9090", "x{{project}}").replace("      max: 0\n", ""),
    );
    const incomplete = await server.run(["validate", "-f", missing], { cwd: dir });
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toMatch(/missing\.yaml:8:\d+: missing required key "max" in "prometheus"/);
    // Credentials come from the environment, by one way at a time, under names a shell can set.
    const withAuth = (...lines: string[]) =>
      `${prometheus("https://prometheus:9090", "x{{project}}").replace("      max: 0\n", `      max: 0\n${lines.join("\n")}\n`)}`;
    const basic = await write(
      "basic.yaml",
      withAuth("      basic_auth:", "        username: pcsync", "        password_env: PROM_PASSWORD"),
    );
    const basicChecked = await server.run(["validate", "-f", basic], { cwd: dir });
    expect(basicChecked.code, basicChecked.stderr).toBe(0);
    const both = await write(
      "both.yaml",
      withAuth(
        "      bearer_token_env: PROM_TOKEN",
        "      basic_auth:",
        "        username: pcsync",
        "        password_env: PROM_PASSWORD",
      ),
    );
    const bothChecked = await server.run(["validate", "-f", both], { cwd: dir });
    expect(bothChecked.code).toBe(1);
    expect(bothChecked.stderr).toMatch(
      /both\.yaml:11:\d+: prometheus has both bearer_token_env and basic_auth/,
    );
    const badNames = await write(
      "names.yaml",
      withAuth("      basic_auth:", '        username: "a:b"', "        password_env: $PROM-PASSWORD"),
    );
    const namesChecked = await server.run(["validate", "-f", badNames], { cwd: dir });
    expect(namesChecked.code).toBe(1);
    expect(namesChecked.stderr).toMatch(/names\.yaml:12:\d+: "username" cannot hold a colon, got text "a:b"/);
    expect(namesChecked.stderr).toMatch(
      /names\.yaml:13:\d+: "password_env" is the name of an environment variable/,
    );
  });
});
