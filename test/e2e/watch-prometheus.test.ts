// E2E with a real Prometheus (Debian's prometheus package, which .ci/run installs): it scrapes
// `pcsync watch`, and an out-of-band edit on the emulator shows in pcsync_drift_changes as
// Prometheus stores it. promtool accepts what /metrics serves and the example alert rules.
// Without Prometheus the tests skip with a note, except in CI (CI set), where they fail.

import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { EXAMPLES } from "../support/paths.js";
import { openServer } from "../support/test-server.js";
import { startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

function hasCommand(name: string): boolean {
  return spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0;
}

const installed = hasCommand("prometheus") && hasCommand("promtool");
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
if (!installed && !inCi) {
  console.warn(
    "note: prometheus/promtool not found: the Prometheus end-to-end tests are skipped (apt-get install prometheus)",
  );
}
// In CI a missing Prometheus is a failure, not a skip: the checks below must have run.
const runIt = installed || inCi ? it : it.skip;

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

function requireInstalled(): void {
  if (!installed) {
    throw new Error(
      "prometheus and promtool are not installed: .ci/run installs Debian's prometheus package",
    );
  }
}

function promtool(args: string[], input?: string): { status: number | null; output: string } {
  const result = spawnSync("promtool", args, { input, encoding: "utf8" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
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
      requireInstalled();
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

      const port = await freePort();
      const config = join(directory, "prometheus.yml");
      await writeFile(
        config,
        [
          "global:",
          "  scrape_interval: 1s",
          "  scrape_timeout: 500ms",
          "  evaluation_interval: 500ms",
          "rule_files:",
          `  - ${join(EXAMPLES, "watch", "pcsync-alerts.yml")}`,
          "scrape_configs:",
          "  - job_name: pcsync",
          "    scrape_interval: 500ms",
          "    scrape_timeout: 500ms",
          "    static_configs:",
          `      - targets: ["${target}"]`,
          "",
        ].join("\n"),
      );
      const prometheus = spawn(
        "prometheus",
        [
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(directory, "tsdb")}`,
          `--web.listen-address=127.0.0.1:${port}`,
          "--log.level=error",
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let prometheusLog = "";
      prometheus.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        prometheusLog += chunk;
      });
      onTestFinished(async () => {
        prometheus.kill("SIGTERM");
        if (prometheus.exitCode === null) await new Promise((resolve) => prometheus.once("exit", resolve));
      });
      const query = async (expression: string): Promise<number | undefined> => {
        try {
          const response = await fetch(
            `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expression)}`,
          );
          const body = (await response.json()) as { data?: { result?: { value: [number, string] }[] } };
          const value = body.data?.result?.[0]?.value[1];
          return value === undefined ? undefined : Number(value);
        } catch {
          return undefined; // not up yet
        }
      };
      const drift = 'pcsync_drift_changes{project="1",family="plugin_configs"}';
      await expect
        .poll(() => query(drift), {
          timeout: 20_000,
          interval: 200,
          message: `Prometheus log:\n${prometheusLog}`,
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
    requireInstalled();
    const rules = promtool(["check", "rules", join(EXAMPLES, "watch", "pcsync-alerts.yml")]);
    expect(rules.output).toContain("SUCCESS: 5 rules found");
    expect(rules.status).toBe(0);
    const config = promtool(["check", "config", join(EXAMPLES, "watch", "prometheus.yml")]);
    expect(config.status).toBe(0);
  });
});
