// E2E with a real Prometheus (Debian's prometheus package, which .ci/run installs): it scrapes
// `pcsync watch`, and an out-of-band edit on the emulator shows in pcsync_drift_changes as
// Prometheus stores it. promtool accepts what /metrics serves and the example alert rules.
// Without Prometheus the tests skip with a note, except in CI (CI set), where they fail.

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { EXAMPLES } from "../support/paths.js";
import { itWithPrometheus, requirePrometheus, startPrometheus } from "../support/prometheus.js";
import { openServer } from "../support/test-server.js";
import { startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

const runIt = itWithPrometheus("the Prometheus end-to-end tests of watch");

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

function promtool(args: string[], input?: string): { status: number | null; output: string } {
  const result = spawnSync("promtool", args, { input, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

const GEOIP = manifest(
  "version: 1",
  "projects:",
  '  "1":',
  "    plugin_configs:",
  "      configs:",
  "        - name: GeoIP",
  "          plugin: 1",
  "          enabled: true",
);

describe("pcsync watch with Prometheus", { timeout: 90_000 }, () => {
  runIt(
    "is scraped by a real Prometheus, which sees an out-of-band edit as drift",
    async ({ onTestFinished }) => {
      requirePrometheus();
      const server = await openServer(onTestFinished, "seed");
      const file = join(directory, "pcsync.yaml");
      await writeSettled(file, GEOIP);
      const watcher = await startWatcher(["-f", file, "--interval", "500ms", "--jitter", "0"], {
        env: server.env,
      });
      onTestFinished(async () => {
        watcher.signal("SIGTERM");
        await watcher.done;
      });
      const target = new URL(watcher.url).host;

      // promtool reads what /metrics serves (process metrics included) as valid exposition text.
      await watcher.cycles(1);
      const exposition = (await watcher.get("/metrics")).text;
      const checked = promtool(["check", "metrics"], exposition);
      expect(checked.output).toBe("");
      expect(checked.status).toBe(0);

      const { query, log } = await startPrometheus(onTestFinished, {
        directory,
        targets: [target],
        scrapeInterval: "500ms",
        extraConfig: ["rule_files:", `  - ${join(EXAMPLES, "watch", "pcsync-alerts.yml")}`],
      });
      const drift = 'pcsync_drift_changes{project="1",family="plugin_configs"}';
      await expect
        .poll(() => query(drift), {
          timeout: 20_000,
          interval: 200,
          message: `Prometheus log:\n${log()}`,
        })
        .toBe(0);

      const [record] = (await server.list(1, "plugin_configs")).filter((entry) => entry.name === "GeoIP");
      await server.call("PATCH", `/api/projects/1/plugin_configs/${record?.id}/`, { enabled: false });
      await expect.poll(() => query(drift), { timeout: 20_000, interval: 200 }).toBeGreaterThan(0);
      expect(await query('pcsync_cycles_total{result="ok"}')).toBeGreaterThan(0);
      // The alert rules load and evaluate against the real series (PcsyncDrift is pending: its for: is 15m).
      await expect
        .poll(() => query('ALERTS{alertname="PcsyncDrift",alertstate="pending"}'), {
          timeout: 20_000,
          interval: 200,
        })
        .toBe(1);
    },
  );

  runIt("accepts the example alert rules and scrape config", () => {
    requirePrometheus();
    const rules = promtool(["check", "rules", join(EXAMPLES, "watch", "pcsync-alerts.yml")]);
    expect(rules.output).toContain("SUCCESS: 5 rules found");
    expect(rules.status).toBe(0);
    const config = promtool(["check", "config", join(EXAMPLES, "watch", "prometheus.yml")]);
    expect(config.status).toBe(0);
  });
});
