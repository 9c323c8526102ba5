// E2E: where a rollout meets the rest of apply. A rollout that halted with its change left in place
// (on_failure: halt) is not gone around by applying the same manifest again: the later waves would
// be written with no healthy wave before them, or the apply would say "no changes" and exit 0; once
// the failing project no longer holds the change, the manifest rolls out again from its first
// wave. And the flags that would break a rollout say so: --shard and --no-journal are refused where
// apply writes, and --project that leaves a named wave out is warned of. The job summary in GitHub
// Actions says how a rollout ended, also when it halted. Both profiles.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import {
  geoipDescriptions,
  ROLLOUT_PROJECTS,
  rolloutManifest,
  rolloutWorkDir,
  runSlow,
  threeWaveRollout,
  waitFor,
  webhookReceiver,
} from "../support/rollout-setup.js";

const CANARY_BAKING = '"canary": written and seen as planned; baking';

import { openServer } from "../support/test-server.js";

const PROFILES = ["seed", "posthog-2024"] as const;

/** The waves apply wrote, from its progress lines. */
function wavesWritten(stderr: string): string[] {
  return [...stderr.matchAll(/rollout: wave \d+\/\d+ "([^"]+)": writing /g)].map((match) => match[1] ?? "");
}

describe.concurrent.each(PROFILES)("a rollout that halted with on_failure: halt, on %s", (profile) => {
  it("is refused when the same manifest is applied again, until the failing project no longer holds the change", async ({
    onTestFinished,
  }) => {
    // 600 entries a minute with a 1 s bake: the entries a wave is judged on, as 60 a minute give
    // over the 10 s bakes users start with.
    const server = await openServer(onTestFinished, profile, {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      logRate: 600,
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const before = await geoipDescriptions(server);
    // The canary (project 2) is sound, the second wave (project 1) breaks, the rest (project 3) waits.
    const file = await write(
      "pcsync.yaml",
      rolloutManifest(
        (project) => (project === "1" ? "v7 BROKEN" : "v7"),
        [...threeWaveRollout("1s"), "  on_failure: halt"],
      ),
    );
    const summaryFile = join(dir, "step-summary.md");
    const halted = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir, {
      GITHUB_ACTIONS: "true",
      GITHUB_STEP_SUMMARY: summaryFile,
    });
    expect(halted.code, halted.stderr).toBe(4);
    expect(wavesWritten(halted.stderr)).toEqual(["canary", "second"]);
    // The job page says how it ended, not only the plan.
    const summary = await readFile(summaryFile, "utf8");
    expect(summary).toContain("### pcsync apply (rollout halted)");
    expect(summary).toMatch(
      /Rollout halted in wave "second": failing projects:\n {2}project 1: \d+ ERROR of \d+ entries/,
    );
    expect(summary).toContain("Nothing was rolled back (on_failure: halt): the waves written stay.");
    expect(halted.stderr).toContain("1 project failed the health check (project 1); nothing was rolled back");
    const written = await geoipDescriptions(server);
    expect(written).toEqual(["v7 BROKEN", "v7", before[2]]);

    // The plan of the same manifest (the pull request's comment) says that apply will refuse: its
    // waves alone would read as a fresh rollout whose canary has nothing to write.
    const planned = await runSlow(server, ["plan", "-f", file], dir);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toMatch(
      /^warning: apply will refuse \(exit 4\): the last rollout of this manifest halted in wave 2 "second" \(rollout journal \.pcsync\/rollout\/\S+\.jsonl\), and project 1, which failed the health check, still holds the change; fix the change in the manifest .*, or undo the waves written \(`pcsync rollback --journal (\.pcsync\/rollout\/\S+\.jsonl)` undoes the rollout, newest wave first\)/m,
    );
    // A script reading the JSON plan gets it too (an adversarial pass found only stderr said it),
    // and the document, saved and applied with --plan, is read back as any plan.
    const asJson = await runSlow(server, ["plan", "-f", file, "--format", "json"], dir);
    const planDocument = JSON.parse(asJson.stdout) as { notices?: { level: string; text: string }[] };
    expect(planDocument.notices?.[0]).toMatchObject({
      level: "warning",
      text: expect.stringMatching(/^apply will refuse \(exit 4\): the last rollout of this manifest halted/),
    });
    const comment = await runSlow(server, ["plan", "-f", file, "--format", "markdown"], dir);
    expect(comment.stdout).toMatch(
      /^> \[!WARNING\]\n> apply will refuse \(exit 4\): the last rollout of this manifest halted/m,
    );

    // Applied again as it is (a CI job run again): nothing is written, and the exit stays 4.
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(4);
    expect(wavesWritten(again.stderr)).toEqual([]);
    expect(again.stderr).toMatch(
      /the last rollout of this manifest halted in wave 2 "second" \(rollout journal \.pcsync\/rollout\/[^)]+\.jsonl\), and project 1, which failed the health check, still holds the change\. Applying the same manifest again would write the waves after it with no healthy wave before them, so it is refused: nothing was changed\./,
    );
    expect(await geoipDescriptions(server)).toEqual(written);
    // Nor by a run that --project narrows to a later wave's project, leaving the failing one out:
    // it is not read, so it may still hold the change (an adversarial pass found this way around).
    const narrowed = await runSlow(server, ["apply", "-f", file, "--project", "3", "--auto-approve"], dir);
    expect(narrowed.code, narrowed.stderr).toBe(4);
    expect(wavesWritten(narrowed.stderr)).toEqual([]);
    expect(narrowed.stderr).toContain(
      "and project 1, which failed the health check, may still hold the change (--project leaves it out of this run, so it is not read: apply without --project checks)",
    );
    // A script reading apply's JSON gets the plan and why it was refused, as plan gives its plan.
    const json = await runSlow(server, ["apply", "-f", file, "--auto-approve", "--format", "json"], dir);
    expect(json.code, json.stderr).toBe(4);
    const document = JSON.parse(json.stdout) as { plan: { format: string }; result: null; refused: string };
    expect(document.plan.format).toBe("pcsync-plan");
    expect(document.result).toBeNull();
    expect(document.refused).toMatch(/^the last rollout of this manifest halted in wave 2 "second"/);
    const narrowedPlan = await runSlow(server, ["plan", "-f", file, "--project", "3"], dir);
    expect(narrowedPlan.stderr).toMatch(
      /^warning: apply will refuse \(exit 4\): .* may still hold the change/m,
    );
    expect(await geoipDescriptions(server)).toEqual(written);
    // Nor by the same manifest with a comment on top, under another file name: what it asks is
    // the same (a comment must not lift a halt, nor orphan an interrupted rollout).
    const text = await readFile(file, "utf8");
    const commented = await write(
      "commented.yaml",
      `# reviewed again\n${text.replace("\nprojects:", "\n# the fleet\nprojects:")}`,
    );
    const moved = await runSlow(server, ["apply", "-f", commented, "--auto-approve"], dir);
    expect(moved.code, moved.stderr).toBe(4);
    expect(moved.stderr).toContain("the last rollout of this manifest halted in wave 2");
    expect(await geoipDescriptions(server)).toEqual(written);
    // Nor by a new rollout: block alone (another bake, on_failure, budget): it is the change that
    // failed, and the halt is the change's (a user found this way around).
    const retuned = await write(
      "retuned.yaml",
      text
        .replace("bake: 1s", "bake: 3s")
        .replace("on_failure: halt", "on_failure: rollback\n  failure_budget: 1"),
    );
    expect(retuned).not.toBe(file);
    const loosened = await runSlow(server, ["apply", "-f", retuned, "--auto-approve"], dir);
    expect(loosened.code, loosened.stderr).toBe(4);
    expect(wavesWritten(loosened.stderr)).toEqual([]);
    expect(loosened.stderr).toContain("the last rollout of this manifest halted in wave 2");
    const retunedPlan = await runSlow(server, ["plan", "-f", retuned], dir);
    expect(retunedPlan.stderr).toContain(
      "a new change starts a new rollout; a new rollout: block alone does not",
    );
    expect(await geoipDescriptions(server)).toEqual(written);
    // Nor by an edit elsewhere in the manifest (a config added to the canary's project): it is a
    // new change, and a new rollout, but project 1 is asked for the change that failed there, and
    // holds it; its wave would have nothing to write, and the rest would get the change unjudged
    // (an adversarial pass found this way around, and the next one).
    const edited = await write(
      "edited.yaml",
      text.replace(
        '  "2":\n    plugin_configs:\n      configs:\n',
        '  "2":\n    plugin_configs:\n      configs:\n        - name: Property Filter\n          plugin: 2\n          enabled: false\n',
      ),
    );
    expect(await readFile(edited, "utf8")).toContain("Property Filter");
    const unrelated = await runSlow(server, ["apply", "-f", edited, "--auto-approve"], dir);
    expect(unrelated.code, unrelated.stderr).toBe(4);
    expect(wavesWritten(unrelated.stderr)).toEqual([]);
    expect(unrelated.stderr).toMatch(
      /a rollout of another version of this manifest halted in wave 2 "second" \(rollout journal \.pcsync\/rollout\/[^)]+\.jsonl\), and project 1, which failed the health check, still holds the change that failed there, which this manifest asks of it as it was\. .*refused: nothing was changed/,
    );
    const editedPlan = await runSlow(server, ["plan", "-f", edited], dir);
    expect(editedPlan.stderr).toMatch(
      /^warning: apply will refuse \(exit 4\): a rollout of another version of this manifest halted in wave 2 "second"/m,
    );
    // Nor by an edit to the failing project that leaves the config that failed alone: its wave would
    // be judged on the new config only (the next adversarial pass found this way around).
    const beside = await write(
      "beside.yaml",
      text.replace(
        '  "1":\n    plugin_configs:\n      configs:\n',
        '  "1":\n    plugin_configs:\n      configs:\n        - name: Property Filter\n          plugin: 2\n          enabled: true\n          description: another\n',
      ),
    );
    expect(await readFile(beside, "utf8")).toContain("description: another");
    const inProject = await runSlow(server, ["apply", "-f", beside, "--auto-approve"], dir);
    expect(inProject.code, inProject.stderr).toBe(4);
    expect(wavesWritten(inProject.stderr)).toEqual([]);
    expect(inProject.stderr).toContain(
      "and project 1, which failed the health check, still holds the change that failed there",
    );
    // Nor by the same manifest with a fresh --journal path (a CI job that names its journal by run).
    const fresh = await runSlow(
      server,
      ["apply", "-f", file, "--auto-approve", "--journal", "ci/rollout-run-42.jsonl"],
      dir,
    );
    expect(fresh.code, fresh.stderr).toBe(4);
    expect(wavesWritten(fresh.stderr)).toEqual([]);
    expect(fresh.stderr).toContain('the last rollout of this manifest halted in wave 2 "second"');
    expect(await geoipDescriptions(server)).toEqual(written);
    // The way out it names: the rollout's journal, which rollback undoes whole.
    expect(/`pcsync rollback --journal (\S+?\.jsonl)`/.exec(again.stderr)?.[1]).toMatch(
      /^\.pcsync\/rollout\//,
    );

    // The second wave undone by hand, by its own journal: the manifest rolls out again, and halts
    // again in that wave.
    const secondWave = /journal (\S+-wave-2\.jsonl)/.exec(halted.stderr)?.[1] ?? "";
    const undone = await runSlow(server, ["rollback", "--journal", secondWave, "--auto-approve"], dir);
    expect(undone.code, undone.stderr).toBe(0);
    const rerun = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(rerun.code, rerun.stderr).toBe(4);
    expect(wavesWritten(rerun.stderr)).toEqual(["second"]);
    expect(rerun.stderr).toContain("1 project failed the health check (project 1)");
    expect((await geoipDescriptions(server))[2]).toEqual(before[2]);
  }, 120_000);

  it("halted in its last wave: applying it again is refused too, where it would say no changes and exit 0", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      logRate: 600,
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      rolloutManifest(
        (project) => (project === "2" ? "v8" : "v8 BROKEN"),
        [
          "rollout:",
          "  waves:",
          "    - name: canary",
          '      projects: ["2"]',
          "    - name: rest",
          "      percent: 100",
          "  bake: 1s",
          "  on_failure: halt",
          "  health:",
          "    logs:",
          "      min_entries: 2",
        ],
      ),
    );
    const halted = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(halted.code, halted.stderr).toBe(4);
    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(4);
    // The plan shown has nothing to write (the manifest's state is there); the apply still ends 4.
    expect(again.stdout).toContain("No changes.");
    expect(again.stderr).toMatch(
      /halted in wave 2 "rest" .*projects (1, 3|3, 1), which failed the health check, still hold the change\. Applying the same manifest again would find nothing left to write and end as if the rollout had passed, so it is refused/,
    );
    // A plan says what it sees: the manifest's state is there, no drift.
    const plan = await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: dir });
    expect(plan.code, plan.stderr).toBe(0);
  }, 120_000);
});

describe.concurrent.each(PROFILES)(
  "a later wave whose projects changed during an earlier wave's bake, on %s",
  (profile) => {
    it("is not written from the plan made before: the rollout stops before it (exit 1), with no second record of a name, and says so to the webhook and the metrics file", async ({
      onTestFinished,
    }) => {
      const server = await openServer(onTestFinished, profile);
      const { path: dir, write } = await rolloutWorkDir(onTestFinished);
      const receiver = await webhookReceiver(onTestFinished);
      // Project 1 (the second wave) is to get a new config, "Fresh One".
      const text = rolloutManifest("v13", threeWaveRollout("2s")).replace(
        '  "1":\n    plugin_configs:\n      configs:\n',
        '  "1":\n    plugin_configs:\n      configs:\n        - name: Fresh One\n          plugin: 3\n',
      );
      expect(text).toContain("Fresh One");
      const file = await write("pcsync.yaml", text.replace("min_entries: 2", "min_entries: 0"));
      const run = spawnCli(
        ["apply", "-f", file, "--auto-approve", "--webhook", receiver.url, "--metrics-file", "rollout.prom"],
        { cwd: dir, env: { ...server.env }, timeoutMs: 80_000 },
      );
      await waitFor(() => run.soFar().stderr.includes(CANARY_BAKING), "the canary's bake");
      // Someone else creates "Fresh One" in project 1 while the canary bakes.
      const made = await server.call("POST", "/api/projects/1/plugin_configs/", {
        plugin: 3,
        name: "Fresh One",
        enabled: true,
        order: 9,
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const applied = await run.done;
      expect(applied.code, applied.stderr).toBe(1);
      expect(wavesWritten(applied.stderr)).toEqual(["canary"]);
      expect(applied.stderr).toMatch(
        /the rollout stopped before wave "second": since the plan was made, th(?:is|ese) changed \(someone else writing\?\):\n(?: {2}.*\n)* {2}a record named "Fresh One" \(id \d+\) now exists in project 1 plugin_configs; the plan would create a second one\n(?: {2}.*\n)*Nothing of that wave or any later one was written/,
      );
      const records = await server.list("1", "plugin_configs");
      expect(records.filter((record) => record.name === "Fresh One")).toHaveLength(1);
      // Those who watch the rollout's events hear that it stopped, not only that the canary passed.
      expect(receiver.events.map((event) => event.event)).toEqual([
        "rollout_wave_started",
        "rollout_wave_passed",
        "rollout_stopped",
      ]);
      expect(receiver.events[2]?.rollout?.wave).toBe("second");
      expect(receiver.events[2]?.message).toMatch(
        /^stopped in wave "second" \(changed\): its projects changed since the plan was made: a record named "Fresh One" .*applying the same manifest again finishes it$/,
      );
      const metrics = await readFile(join(dir, "rollout.prom"), "utf8");
      expect(metrics).toContain('pcsync_rollout_events_total{event="rollout_stopped"} 1\n');
      expect(metrics).toContain('pcsync_rollout_wave_status{wave="second",status="pending"} 1\n');
    }, 90_000);
  },
);

describe.concurrent.each(PROFILES)("a wave's journal while its rollout runs, on %s", (profile) => {
  it("cannot be rolled back by hand (exit 3, naming the run): the rollout would go on from a wave that no longer holds its change", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v26", threeWaveRollout("3s")));
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(() => run.soFar().stderr.includes(CANARY_BAKING), "the canary's bake");
    const canaryJournal = /"canary": writing project 2; journal (\S+wave-1\.jsonl)/.exec(
      run.soFar().stderr,
    )?.[1];
    expect(canaryJournal, run.soFar().stderr).toBeDefined();
    const byHand = await server.run(["rollback", "--journal", canaryJournal ?? "", "--auto-approve"], {
      cwd: dir,
    });
    expect(byHand.code, byHand.stderr).toBe(3);
    expect(byHand.stderr).toMatch(/apply \(rollout\)/);
    const applied = await run.done;
    expect(applied.code, applied.stderr).toBe(0);
    expect(await geoipDescriptions(server)).toEqual(["v26", "v26", "v26"]);
    // Once the rollout has ended, the wave's journal is anyone's to roll back.
    const after = await server.run(["rollback", "--journal", canaryJournal ?? "", "--auto-approve"], {
      cwd: dir,
    });
    expect(after.code, after.stderr).toBe(0);
  }, 90_000);
});

describe.concurrent.each(PROFILES)("a wave changed by someone else during its bake, on %s", (profile) => {
  it("is not judged on what it no longer holds: the rollout stops (exit 1) before any later wave; applied again, the wave is written again and the rollout finishes", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v27", threeWaveRollout("2s")));
    const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir,
      env: { ...server.env },
      timeoutMs: 80_000,
    });
    await waitFor(() => run.soFar().stderr.includes(CANARY_BAKING), "the canary's bake");
    // Someone puts the canary's GeoIP back by hand while it bakes.
    const geoip = (await server.list("2", "plugin_configs")).find((record) => record.name === "GeoIP");
    const edited = await server.call("PATCH", `/api/projects/2/plugin_configs/${geoip?.id}/`, {
      description: "by hand",
    });
    expect(edited.status).toBe(200);
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stderr).toMatch(
      /the rollout stopped in wave "canary": when its bake ended, project 2 no longer held what the wave wrote to the plugin configs it judges \(changed, deleted or rolled back during the bake\?\), so the wave was not judged; no later wave was written/,
    );
    expect(stopped.stderr).not.toMatch(/"canary": project 2 passes/);
    expect(wavesWritten(stopped.stderr)).toEqual(["canary"]);

    const again = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('wave 1/3 "canary": project 2 no longer as the wave wrote it');
    expect(await geoipDescriptions(server)).toEqual(["v27", "v27", "v27"]);
  }, 90_000);
});

describe.concurrent.each(PROFILES)(
  "a wave changed by someone else in its bake's last moments, on %s",
  (profile) => {
    it("is not judged either: the wave is read again once its bake has ended, not in its idle time before", async ({
      onTestFinished,
    }) => {
      // Every request waits 300 ms before it is handled: a re-read made in the bake's last moments
      // (as a read ahead would) is handled before the edit below, one made once the bake has ended after it.
      const server = await openServer(onTestFinished, profile, { faults: { latencyMs: 300 } });
      const { path: dir, write } = await rolloutWorkDir(onTestFinished);
      const file = await write("pcsync.yaml", rolloutManifest("v28", threeWaveRollout("3s")));
      const geoip = (await server.list("2", "plugin_configs")).find((record) => record.name === "GeoIP");
      const run = spawnCli(["apply", "-f", file, "--auto-approve"], {
        cwd: dir,
        env: { ...server.env },
        timeoutMs: 80_000,
      });
      await waitFor(() => run.soFar().stderr.includes(CANARY_BAKING), "the canary's bake");
      const until = /"canary": written and seen as planned; baking [^,]+, until (\S+)\n/.exec(
        run.soFar().stderr,
      )?.[1];
      expect(until).toBeDefined();
      // Sent 400 ms before the bake ends, the edit is made 100 ms before it ends.
      await new Promise((resolve) => setTimeout(resolve, Date.parse(until ?? "") - 400 - Date.now()));
      const edited = await server.call("PATCH", `/api/projects/2/plugin_configs/${geoip?.id}/`, {
        description: "by hand, late",
      });
      expect(edited.status).toBe(200);
      const stopped = await run.done;
      expect(stopped.code, stopped.stderr).toBe(1);
      expect(stopped.stderr).toMatch(
        /the rollout stopped in wave "canary": when its bake ended, project 2 no longer held/,
      );
      expect(stopped.stderr).not.toMatch(/"canary": project 2 passes/);
      expect(wavesWritten(stopped.stderr)).toEqual(["canary"]);
    }, 90_000);
  },
);

describe.concurrent.each(PROFILES)(
  "a rollout that switches a plugin off across the fleet, on %s",
  (profile) => {
    it("completes: a config the wave leaves disabled logs nothing, so it is not judged, and the verdict says so", async ({
      onTestFinished,
    }) => {
      // Busy plugins and min_entries 2: an enabled config would be judged; a disabled one, judged by
      // its logs, would be "unknown", fail, and roll the switch-off back.
      const server = await openServer(onTestFinished, profile, { logRate: 600 });
      const { path: dir, write } = await rolloutWorkDir(onTestFinished);
      const file = await write(
        "pcsync.yaml",
        rolloutManifest("Country lookup", threeWaveRollout("1s")).replaceAll(
          "enabled: true",
          "enabled: false",
        ),
      );
      const applied = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(
        'wave 1/3 "canary": project 2 passes: nothing to judge: the plugin config the wave created or updated here is disabled (a disabled plugin logs nothing)',
      );
      // The last line does not say all was judged where nothing was.
      expect(applied.stdout).toContain(
        "Rollout complete: every wave was written, seen as planned, baked and judged healthy; projects 2, 1, 3 had nothing to judge",
      );
      const lists = await Promise.all(
        ROLLOUT_PROJECTS.map((project) => server.list(project, "plugin_configs")),
      );
      expect(lists.map((records) => records.find((record) => record.name === "GeoIP")?.enabled)).toEqual([
        false,
        false,
        false,
      ]);
      const again = await runSlow(server, ["plan", "-f", file, "--detailed-exitcode"], dir);
      expect(again.code, again.stdout).toBe(0);
    });
  },
);

describe("a rollout that an error ends", () => {
  it("says so in the job summary, and tells its webhook rollout_stopped with the error", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const receiver = await webhookReceiver(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v28", threeWaveRollout("2s")));
    const summaryFile = join(dir, "step-summary.md");
    const run = spawnCli(["apply", "-f", file, "--auto-approve", "--webhook", receiver.url], {
      cwd: dir,
      // The client's retries at a tenth of their durations, in proportion.
      env: {
        ...server.env,
        GITHUB_ACTIONS: "true",
        GITHUB_STEP_SUMMARY: summaryFile,
        PCSYNC_TIME_SCALE: "0.1",
      },
      timeoutMs: 80_000,
    });
    await waitFor(() => run.soFar().stderr.includes(CANARY_BAKING), "the canary's bake");
    // The service fails every request from the canary's bake on.
    server.emulator.setFaults({ fail503Rate: 1 });
    const ended = await run.done;
    server.emulator.setFaults({});
    expect(ended.code, ended.stderr).toBe(1);
    expect(await readFile(summaryFile, "utf8")).toContain("### pcsync apply (rollout stopped by an error)");
    const last = receiver.events.at(-1);
    expect(last?.event).toBe("rollout_stopped");
    expect(last?.message).toMatch(/^stopped in wave "canary" \(error\): .*503/);
  }, 90_000);
});

describe("flags that would break a rollout", () => {
  it("--shard and --no-journal are refused by apply, before any request; a plan of one shard is not", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write("pcsync.yaml", rolloutManifest("v9", threeWaveRollout("1s")));
    const before = await geoipDescriptions(server);

    const sharded = await server.run(["apply", "-f", file, "--shard", "1/2", "--auto-approve"], { cwd: dir });
    expect(sharded.code).toBe(1);
    expect(sharded.stderr).toMatch(
      /--shard 1\/2 cannot go with the manifest's rollout: \(.*pcsync\.yaml:2\): a rollout's waves go one after another across all its projects, and --shard runs beside the other shards, so one shard's canary would not go before the others' writes; apply the rollout in one run, without --shard/,
    );
    const unjournaled = await server.run(["apply", "-f", file, "--no-journal", "--auto-approve"], {
      cwd: dir,
    });
    expect(unjournaled.code).toBe(1);
    expect(unjournaled.stderr).toContain("--no-journal cannot go with the manifest's rollout:");
    expect(await geoipDescriptions(server)).toEqual(before);

    // A shard's plan is a drift check (the sharded cron workflow): no refusal, no warning.
    for (const args of [
      ["plan", "-f", file, "--shard", "1/2"],
      ["apply", "-f", file, "--shard", "1/2", "--dry-run"],
    ]) {
      const shown = await server.run(args, { cwd: dir });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stderr).not.toContain("--shard");
    }
  });

  it("--journal naming a file that holds a rollout still to finish of another manifest, not a rollout journal, or a device, is a clear error; one whose rollout ended is moved aside", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const waves = [
      ...threeWaveRollout("0s").filter((line) => !line.includes("min_entries")),
      "      min_entries: 0",
    ];
    const first = await write("first.yaml", rolloutManifest("v11", waves));
    const done = await server.run(["apply", "-f", first, "--journal", "r.jsonl", "--auto-approve"], {
      cwd: dir,
    });
    expect(done.code, done.stderr).toBe(0);
    const ended = await readFile(join(dir, "r.jsonl"), "utf8");
    // The same rollout as if killed before its end: one still to finish, of another manifest.
    const unfinished = await write("unfinished.jsonl", ended.replace(/^.*"kind":"end".*\n/m, ""));
    const second = await write("second.yaml", rolloutManifest("v12", waves));
    const stillToFinish =
      "it exists already and holds no rollout of this manifest to finish, nor one that ended";
    const cases: [journal: string, why: string][] = [
      [unfinished, stillToFinish],
      [second, "which this run reads"],
      [first, stillToFinish],
      ["/dev/null", "it is a character device, not a file"],
    ];
    for (const [journal, why] of cases) {
      const refused = await server.run(["apply", "-f", second, "--journal", journal, "--auto-approve"], {
        cwd: dir,
      });
      expect(refused.code, `${journal}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr).toContain(why);
      expect(refused.stderr).not.toMatch(/internal error|--no-journal/);
    }
    expect(await geoipDescriptions(server)).toEqual(["v11", "v11", "v11"]);

    // A fixed path (a CI workflow's, run again) whose rollout ended: moved aside, said, kept whole.
    const next = await server.run(["apply", "-f", second, "--journal", "r.jsonl", "--auto-approve"], {
      cwd: dir,
    });
    expect(next.code, next.stderr).toBe(0);
    const moved =
      /The rollout journal r\.jsonl held a rollout that ended \(complete\): moved to (r\.[-0-9TZ.]+\.jsonl)\./.exec(
        next.stderr,
      )?.[1];
    expect(moved, next.stderr).toBeDefined();
    expect(await readFile(join(dir, moved ?? ""), "utf8")).toBe(ended);
    expect(await geoipDescriptions(server)).toEqual(["v12", "v12", "v12"]);
    // The new rollout is the path's now: applied again, nothing to do, nothing moved.
    const again = await server.run(["apply", "-f", second, "--journal", "r.jsonl", "--auto-approve"], {
      cwd: dir,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("moved to");
  });

  it("--project that leaves a named wave's projects out is warned of by apply, naming the waves written before them", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const waves = [
      ...threeWaveRollout("0s").filter((line) => !line.includes("min_entries")),
      "      min_entries: 0",
    ];
    const file = await write("pcsync.yaml", rolloutManifest("v10", waves));
    // Its dry run says so too: with --auto-approve, the apply's own warning comes after the choice.
    const dry = await server.run(["apply", "-f", file, "--project", "3", "--dry-run"], { cwd: dir });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      'warning: rollout wave 1 "canary" names project 2, which --project leaves out of this run, so waves 2 "second", 3 "rest" are written before it\n',
    );
    const summaryFile = join(dir, "step-summary.md");
    const applied = await server.run(["apply", "-f", file, "--project", "3", "--auto-approve"], {
      cwd: dir,
      env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summaryFile },
    });
    expect(applied.code, applied.stderr).toBe(0);
    // One summary for the run, saying the rollout completed.
    const summary = await readFile(summaryFile, "utf8");
    expect(summary.match(/<!-- pcsync-plan -->/g)).toHaveLength(1);
    expect(summary).toContain("### pcsync apply (rollout complete)");
    expect(summary).toContain(
      "Rollout complete: every wave was written, seen as planned, baked and judged healthy.",
    );
    expect(applied.stderr).toContain(
      'warning: rollout wave 1 "canary" names project 2, which --project leaves out of this run, so waves 2 "second", 3 "rest" are written before it\n',
    );
    expect(applied.stderr).toContain(
      'warning: rollout wave 2 "second" names project 1, which --project leaves out of this run, so wave 3 "rest" is written before it\n',
    );
    // A plan shows the waves as they fall, without the warning; every named project in the run: none.
    const planned = await server.run(["plan", "-f", file, "--project", "1"], { cwd: dir });
    expect(planned.stdout).toContain("1. canary: no project");
    expect(planned.stderr).not.toContain("warning");
    const whole = await server.run(
      ["apply", "-f", file, "--project", "1", "--project", "2", "--auto-approve"],
      {
        cwd: dir,
      },
    );
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stderr).not.toContain("warning");
  });

  it("a halt of a projects: all manifest holds for a run that --project narrows (the whole manifest resolved as its rollout was)", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed", {
      faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      logRate: 600,
    });
    const { path: dir, write } = await rolloutWorkDir(onTestFinished);
    const file = await write(
      "pcsync.yaml",
      [
        "version: 1",
        ...threeWaveRollout("1s"),
        "  on_failure: halt",
        "project_sets:",
        "  - name: fleet",
        "    projects: all",
        "    plugin_configs:",
        "      configs:",
        '        - { name: GeoIP, plugin: 1, enabled: true, description: "v12 BROKEN" }',
        "projects: {}",
        "",
      ].join("\n"),
    );
    const halted = await runSlow(server, ["apply", "-f", file, "--auto-approve"], dir);
    expect(halted.code, halted.stderr).toBe(4);
    const written = await geoipDescriptions(server);
    const narrowed = await runSlow(server, ["apply", "-f", file, "--project", "3", "--auto-approve"], dir);
    expect(narrowed.code, narrowed.stderr).toBe(4);
    expect(wavesWritten(narrowed.stderr)).toEqual([]);
    expect(narrowed.stderr).toContain("may still hold the change (--project leaves it out of this run");
    expect(await geoipDescriptions(server)).toEqual(written);
  });

  it.for(PROFILES)(
    "--exclude of a record only one wave reads is checked against the whole plan, not warned of by each wave (%s)",
    async (profile, { onTestFinished }) => {
      const server = await openServer(onTestFinished, profile);
      const { path: dir, write } = await rolloutWorkDir(onTestFinished);
      const waves = [
        ...threeWaveRollout("0s").filter((line) => !line.includes("min_entries")),
        "      min_entries: 0",
      ];
      const file = await write("pcsync.yaml", rolloutManifest("v11", waves));
      // "Legacy S3" is a record of project 1 only, which the second wave writes: the canary's and
      // the last wave's plans read no record of that name, and must not take the flag for a typo.
      const applied = await server.run(["apply", "-f", file, "--exclude", "Legacy S3", "--auto-approve"], {
        cwd: dir,
      });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).not.toContain("matches no config");
      expect(applied.stdout).toContain("Rollout complete");
      // A name nothing holds is still warned of, once, by the plan of the whole run.
      const typo = await server.run(["apply", "-f", file, "--exclude", "Legacy S4", "--auto-approve"], {
        cwd: dir,
      });
      expect(typo.stderr.match(/--exclude "Legacy S4" matches no config/g)).toHaveLength(1);
    },
  );
});
