// E2E: `apply --metrics-file` during a rollout: the file says where each wave stands as it goes
// (written when a wave starts, passes, halts or rolls back), and the real `promtool check metrics`
// accepts it. Without promtool the test skips with a note, except in CI (CI set), where it fails.

import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { geoipDescriptions, rolloutManifest, threeWaveRollout } from "../support/rollout-setup.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const installed = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0;
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
if (!installed && !inCi)
  console.warn("note: promtool not found: the rollout metrics test is skipped (apt-get install prometheus)");
const runIt = installed || inCi ? it : it.skip;

function promtoolCheck(text: string): { status: number | null; output: string } {
  const result = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** The value of one sample (`name{labels}`) in a text-format file, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.concurrent.each(["seed", "posthog-2024"] as const)("apply --metrics-file on %s", (profile) => {
  runIt(
    "says when a wave starts, passes, halts and is rolled back, in a file promtool accepts",
    async ({ onTestFinished }) => {
      const logErrors = [{ description: "BROKEN", ratio: 0.8 }];
      const server = await openServer(onTestFinished, profile, { faults: { logErrors } });
      const dir = await temporaryDirectory();
      onTestFinished(() => dir.remove());
      const file = await dir.write(
        "pcsync.yaml",
        rolloutManifest((project) => (project === "1" ? "v11 BROKEN" : "v11"), threeWaveRollout("2s")),
      );
      const metricsFile = join(dir.path, "pcsync-rollout.prom");
      const run = spawnCli(["apply", "-f", file, "--auto-approve", "--metrics-file", "pcsync-rollout.prom"], {
        cwd: dir.path,
        env: { ...server.env },
        timeoutMs: 80_000,
      });
      // While the second wave bakes, the file says the canary passed and the second started.
      for (
        let waited = 0;
        !run.soFar().stderr.includes('"second": written and seen as planned; baking');
        waited += 20
      ) {
        if (waited > 60_000) throw new Error(`the second wave never baked:\n${run.soFar().stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const baking = await readFile(metricsFile, "utf8");
      expect(sample(baking, 'pcsync_rollout_wave_status{wave="canary",status="passed"}')).toBe(1);
      expect(sample(baking, 'pcsync_rollout_wave_status{wave="second",status="started"}')).toBe(1);
      expect(sample(baking, 'pcsync_rollout_wave_status{wave="rest",status="pending"}')).toBe(1);
      expect(sample(baking, 'pcsync_rollout_events_total{event="rollout_halted"}')).toBe(0);
      const checkedBaking = promtoolCheck(baking);
      expect(checkedBaking.status, checkedBaking.output).toBe(0);

      const ended = await run.done;
      expect(ended.code, ended.stderr).toBe(4);
      const text = await readFile(metricsFile, "utf8");
      const checked = promtoolCheck(text);
      expect(checked.status, `${checked.output}\n${text}`).toBe(0);
      expect(sample(text, 'pcsync_rollout_events_total{event="rollout_wave_started"}')).toBe(2);
      expect(sample(text, 'pcsync_rollout_events_total{event="rollout_wave_passed"}')).toBe(1);
      expect(sample(text, 'pcsync_rollout_events_total{event="rollout_halted"}')).toBe(1);
      expect(sample(text, 'pcsync_rollout_events_total{event="rollout_rolled_back"}')).toBe(2);
      expect(sample(text, 'pcsync_rollout_events_total{event="rollout_completed"}')).toBe(0);
      expect(sample(text, 'pcsync_rollout_wave_status{wave="canary",status="rolled_back"}')).toBe(1);
      expect(sample(text, 'pcsync_rollout_wave_status{wave="second",status="rolled_back"}')).toBe(1);
      expect(sample(text, 'pcsync_rollout_wave_status{wave="rest",status="pending"}')).toBe(1);
      expect(sample(text, 'pcsync_rollout_failing_projects{wave="second"}')).toBe(1);
      expect(sample(text, "pcsync_rollout_complete")).toBe(0);
      expect(sample(text, "pcsync_rollout_last_event_timestamp_seconds")).toBeGreaterThan(
        Date.now() / 1000 - 120,
      );
      // Only pcsync's own metrics: node_exporter has the process ones.
      expect(text).not.toMatch(/^process_/m);
    },
    120_000,
  );
});

describe("apply --metrics-file and --webhook without rollout:", () => {
  it("warns that they are ignored, writes no file and applies as usual", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const dir = await temporaryDirectory();
    onTestFinished(() => dir.remove());
    const file = await dir.write(
      "pcsync.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          enabled: true",
      ),
    );
    const run = spawnCli(
      [
        ...["apply", "-f", file, "--auto-approve", "--metrics-file", "pcsync-rollout.prom"],
        ...["--webhook", "http://127.0.0.1:9/hook"],
      ],
      { cwd: dir.path, env: { ...server.env }, timeoutMs: 30_000 },
    );
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toContain(
      "warning: --webhook, --metrics-file report a rollout's waves, and this apply has no `rollout:` in its manifest: ignored",
    );
    await expect(readFile(join(dir.path, "pcsync-rollout.prom"), "utf8")).rejects.toThrow(/ENOENT/);
  }, 40_000);
});

describe("apply --metrics-file that pcsync may not write, with rollout:", () => {
  it.for<[string, string]>([
    ["-", "- is not standard output here"],
    [".", "directory"],
    ["MANIFEST", "it is a manifest (-f)"],
    // The rollout's own journal, or a wave's: the metrics would replace the undo (a pass found this).
    ["rollout.jsonl", "it would be one of pcsync's journals"],
    [".pcsync/journal/metrics.prom", "it would be one of pcsync's journals"],
    ["missing/pcsync.prom", "its directory"],
  ])(
    "%s is refused before anything is written (exit 1)",
    { timeout: 40_000 },
    async ([path, said], { onTestFinished }) => {
      const server = await openServer(onTestFinished, "seed");
      const dir = await temporaryDirectory();
      onTestFinished(() => dir.remove());
      const before = await geoipDescriptions(server);
      const file = await dir.write(
        "pcsync.yaml",
        rolloutManifest(() => "v12", threeWaveRollout("0s")),
      );
      const target = path === "MANIFEST" ? basename(file) : path;
      const run = spawnCli(["apply", "-f", file, "--auto-approve", "--metrics-file", target], {
        cwd: dir.path,
        env: { ...server.env },
        timeoutMs: 30_000,
      });
      const ended = await run.done;
      expect(ended.code, ended.stderr).toBe(1);
      expect(ended.stderr).toContain(`pcsync: cannot write ${target} (--metrics-file): `);
      expect(ended.stderr).toContain(said);
      expect(ended.stderr).not.toContain("rollout: wave");
      expect(await geoipDescriptions(server)).toEqual(before);
    },
  );
});
