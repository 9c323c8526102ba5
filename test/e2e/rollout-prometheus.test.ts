// E2E: a rollout judged by a real Prometheus (Debian's prometheus package, which .ci/run installs)
// scraping the emulator's /metrics: the canary's value passes, the next wave's plugin config logs
// ERROR entries after its write, its query's value goes over max and the rollout halts and rolls
// back. A Prometheus that does not answer leaves the wave unknown: it halts, naming the URL.
// Without Prometheus the first test skips with a note, except in CI (CI set), where it fails.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { openServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const installed = spawnSync("prometheus", ["--version"], { stdio: "ignore" }).status === 0;
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";
if (!installed && !inCi)
  console.warn(
    "note: prometheus not found: the rollout's Prometheus gate test is skipped (apt-get install prometheus)",
  );
const runIt = installed || inCi ? it : it.skip;

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

// The ERROR entries a project's plugin configs logged since the wave's writes.
const ERRORS_QUERY =
  'sum(increase(pcsync_emulator_log_entries_total{project="{{project}}",type="ERROR"}[{{window}}]))';

/** Projects 2 (the canary, healthy) then 1 (its new description makes its config log errors). */
function rolloutManifest(prometheusUrl: string, version: string): string {
  return manifest(
    "version: 1",
    "rollout:",
    "  waves:",
    "    - name: canary",
    '      projects: ["2"]',
    "    - name: rest",
    "      percent: 100",
    "  bake: 4s",
    "  health:",
    "    prometheus:",
    `      url: ${prometheusUrl}`,
    `      query: '${ERRORS_QUERY}'`,
    "      max: 0",
    "projects:",
    ...["1", "2"].flatMap((project) => [
      `  "${project}":`,
      "    plugin_configs:",
      "      configs:",
      "        - name: GeoIP",
      "          plugin: 1",
      "          enabled: true",
      `          description: ${version}${project === "1" ? " BROKEN" : ""}`,
    ]),
  );
}

async function descriptions(server: TestServer): Promise<(string | null | undefined)[]> {
  const lists = await Promise.all(["1", "2"].map((project) => server.list(project, "plugin_configs")));
  return lists.map((records) => records.find((record) => record.name === "GeoIP")?.description);
}

describe("a rollout's Prometheus gate", { timeout: 90_000 }, () => {
  runIt(
    "passes the canary on its value and halts the wave whose errors Prometheus sees",
    async ({ onTestFinished }) => {
      if (!installed)
        throw new Error("prometheus is not installed: .ci/run installs Debian's prometheus package");
      const server = await openServer(onTestFinished, "seed", {
        faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
      });
      const dir = await temporaryDirectory();
      onTestFinished(() => dir.remove());
      const port = await freePort();
      const config = join(dir.path, "prometheus.yml");
      await writeFile(
        config,
        [
          "global:",
          "  scrape_interval: 1s",
          "  scrape_timeout: 500ms",
          "scrape_configs:",
          "  - job_name: emulator",
          "    static_configs:",
          `      - targets: ["${new URL(server.emulator.url).host}"]`,
          "",
        ].join("\n"),
      );
      const prometheus: ChildProcess = spawn(
        "prometheus",
        [
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(dir.path, "tsdb")}`,
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
      const url = `http://127.0.0.1:${port}`;
      // Both projects' series are scraped twice (an increase needs two samples) before the rollout.
      const scraped =
        'count(count by (project) (count_over_time(pcsync_emulator_log_entries_total{project=~"1|2",type="ERROR"}[1m]) >= 2))';
      const samples = async (): Promise<number> => {
        try {
          const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(scraped)}`);
          const body = (await response.json()) as { data?: { result?: { value: [number, string] }[] } };
          return Number(body.data?.result?.[0]?.value[1] ?? 0);
        } catch {
          return 0; // not up yet
        }
      };
      await expect
        .poll(samples, { timeout: 30_000, interval: 250, message: `Prometheus log:\n${prometheusLog}` })
        .toBe(2);

      const before = await descriptions(server);
      const file = await dir.write("pcsync.yaml", rolloutManifest(url, "v12"));
      const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
        cwd: dir.path,
        env: { ...server.env },
        timeoutMs: 60_000,
      }).done;
      expect(ended.code, ended.stderr).toBe(4);
      expect(ended.stdout).toContain(
        "Rollout in 2 waves, each baked 4s then judged on a Prometheus query at",
      );
      expect(ended.stderr).toMatch(
        /wave 1\/2 "canary": project 2 passes: the query at http:\/\/127\.0\.0\.1:\d+ gives 0: within max 0/,
      );
      expect(ended.stderr).toMatch(
        /wave 2\/2 "rest": project 1 FAILS: the query at http:\/\/127\.0\.0\.1:\d+ gives [\d.]+: over max 0/,
      );
      expect(ended.stdout).toContain('Rollout halted in wave "rest": failing projects:');
      expect(ended.stdout).toContain('rolled back wave "canary"');
      // Both waves were rolled back: the descriptions are as they were.
      expect(await descriptions(server)).toEqual(before);
    },
  );

  it("leaves a wave unknown when Prometheus does not answer, and halts naming its URL", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const dir = await temporaryDirectory();
    onTestFinished(() => dir.remove());
    const url = `http://127.0.0.1:${await freePort()}`;
    const file = await dir.write("pcsync.yaml", rolloutManifest(url, "v13").replace("bake: 4s", "bake: 0s"));
    const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir.path,
      env: { ...server.env },
      timeoutMs: 60_000,
    }).done;
    expect(ended.code, ended.stderr).toBe(4);
    expect(ended.stderr).toContain(`project 2 FAILS: Prometheus at ${url} did not answer`);
    expect(ended.stderr).toContain("health unknown; fails (set allow_unknown: true to let it pass)");
    expect(ended.stdout).toContain('Rollout halted in wave "canary"');
  });
});
