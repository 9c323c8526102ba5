// E2E: a rollout judged by a real Prometheus (Debian's prometheus package, which .ci/run installs)
// scraping the emulator's /metrics: the canary's value passes, the next wave's plugin config logs
// ERROR entries after its write, its query's value goes over max and the rollout halts and rolls
// back. A Prometheus that does not answer leaves the wave unknown: it halts, naming the URL.
// Without Prometheus the first test skips with a note, except in CI (CI set), where it fails.

import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, type ExpectStatic, expect, it } from "vitest";
import { spawnCli } from "../support/cli.js";
import { freePort } from "../support/free-port.js";
import { manifest } from "../support/manifest-text.js";
import {
  itWithPrometheus,
  PROMETHEUS_TEST_PASSWORD,
  PROMETHEUS_TEST_PASSWORD_HASH,
  startPrometheus,
} from "../support/prometheus.js";
import { openServer, startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const runIt = itWithPrometheus("the rollout's Prometheus gate test");

// The ERROR entries a project's plugin configs logged since the wave's writes.
const ERRORS_QUERY =
  'sum(increase(pcsync_emulator_log_entries_total{project="{{project}}",type="ERROR"}[{{window}}]))';

// Both projects' series are scraped twice (an increase needs two samples) before the rollout.
const SCRAPED_TWICE =
  'count(count by (project) (count_over_time(pcsync_emulator_log_entries_total{project=~"1|2",type="ERROR"}[1m]) >= 2))';

/** Projects 2 (the canary, healthy) then 1 (its new description makes its config log errors). */
function rolloutManifest(
  prometheusUrl: string,
  version: string,
  more: { prometheus?: readonly string[]; health?: readonly string[] } = {},
): string {
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
    ...(more.health ?? []),
    "    prometheus:",
    `      url: ${prometheusUrl}`,
    `      query: '${ERRORS_QUERY}'`,
    "      max: 0",
    ...(more.prometheus ?? []),
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

/** The text of every file under `directory` (the manifest, the plan, the journals). */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => readFile(join(entry.parentPath ?? entry.path, entry.name), "utf8")),
  );
}

async function descriptions(server: TestServer): Promise<(string | null | undefined)[]> {
  const lists = await Promise.all(["1", "2"].map((project) => server.list(project, "plugin_configs")));
  return lists.map((records) => records.find((record) => record.name === "GeoIP")?.description);
}

/**
 * The emulator on `profile` (its BROKEN configs logging errors after a change), a work directory,
 * and a Prometheus scraping the emulator from a directory of its own; ready once both projects'
 * series hold two samples (an increase needs two), or with `upOnly` once Prometheus answers.
 */
async function prometheusOverEmulator(
  { onTestFinished, expect }: { onTestFinished: (done: () => Promise<void>) => void; expect: ExpectStatic },
  profile: "seed" | "posthog-2024",
  options: { basicAuth?: { username: string; bcryptHash: string }; upOnly?: boolean } = {},
) {
  const server = await openServer(onTestFinished, profile, {
    faults: { logErrors: [{ description: "BROKEN", ratio: 0.8 }] },
  });
  const dir = await temporaryDirectory();
  onTestFinished(() => dir.remove());
  const prometheusDir = await temporaryDirectory();
  onTestFinished(() => prometheusDir.remove());
  const prometheus = await startPrometheus(onTestFinished, {
    directory: prometheusDir.path,
    targets: [new URL(server.emulator.url).host],
    ...(options.basicAuth === undefined ? {} : { basicAuth: options.basicAuth }),
  });
  const [query, ready] = options.upOnly === true ? ["vector(1)", 1] : [SCRAPED_TWICE, 2];
  await expect
    .poll(() => prometheus.query(query), {
      timeout: 30_000,
      interval: 250,
      message: `Prometheus log:\n${prometheus.log()}`,
    })
    .toBe(ready);
  return { server, dir, prometheus };
}

describe("a rollout's Prometheus gate", { timeout: 90_000, concurrent: true }, () => {
  runIt("passes the canary on its value and halts the wave whose errors Prometheus sees", async (context) => {
    const { server, dir, prometheus } = await prometheusOverEmulator(context, "seed");
    const url = prometheus.url;

    const before = await descriptions(server);
    const file = await dir.write("pcsync.yaml", rolloutManifest(url, "v12"));
    const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir.path,
      env: { ...server.env },
      timeoutMs: 60_000,
    }).done;
    expect(ended.code, ended.stderr).toBe(4);
    expect(ended.stdout).toContain("Rollout in 2 waves, each baked 4s then judged on a Prometheus query at");
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
  });

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
  runIt(
    "judges each project on its logs and on a Prometheus that asks for a password, and prints the password nowhere",
    async (context) => {
      const { server, dir, prometheus } = await prometheusOverEmulator(context, "posthog-2024", {
        basicAuth: { username: "pcsync", bcryptHash: PROMETHEUS_TEST_PASSWORD_HASH },
      });
      const before = await descriptions(server);
      const file = await dir.write(
        "pcsync.yaml",
        rolloutManifest(prometheus.url, "v14", {
          health: ["    logs:", "      min_entries: 1"],
          prometheus: [
            "      basic_auth:",
            "        username: pcsync",
            "        password_env: PROM_PASSWORD",
          ],
        }),
      );
      const env = { ...server.env, PROM_PASSWORD: PROMETHEUS_TEST_PASSWORD };
      const planned = await spawnCli(["plan", "-f", file], { cwd: dir.path, env }).done;
      expect(planned.stdout).toContain(
        "judged on its plugin configs' logs and a Prometheus query at http://127.0.0.1:",
      );
      expect(planned.stdout).toContain("(as pcsync, the password from $PROM_PASSWORD)");

      const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
        cwd: dir.path,
        env,
        timeoutMs: 60_000,
      }).done;
      expect(ended.code, ended.stderr).toBe(4);
      // The canary passes on both signals; the next wave fails on both, and halts.
      expect(ended.stderr).toMatch(
        /wave 1\/2 "canary": project 2 passes: logs: .*; prometheus: the query at http:\/\/127\.0\.0\.1:\d+ gives 0: within max 0/,
      );
      expect(ended.stderr).toMatch(
        /wave 2\/2 "rest": project 1 FAILS: logs: .*ERROR.*; prometheus: .*over max 0/,
      );
      expect(ended.stdout).toContain('rolled back wave "canary"');
      expect(await descriptions(server)).toEqual(before);
      // The password, and the header made of it, are in no output and no file the run wrote.
      const header = Buffer.from(`pcsync:${PROMETHEUS_TEST_PASSWORD}`).toString("base64");
      const written = [
        planned.stdout,
        planned.stderr,
        ended.stdout,
        ended.stderr,
        ...(await filesUnder(dir.path)),
      ];
      expect(written.length).toBeGreaterThan(6); // the rollout journal and its waves' journals among them
      for (const text of written) {
        expect(text).not.toContain(PROMETHEUS_TEST_PASSWORD);
        expect(text).not.toContain(header);
      }
    },
  );

  runIt("halts in the canary, naming the cause, when Prometheus refuses the password", async (context) => {
    const { server, dir, prometheus } = await prometheusOverEmulator(context, "seed", {
      basicAuth: { username: "pcsync", bcryptHash: PROMETHEUS_TEST_PASSWORD_HASH },
      upOnly: true,
    });
    const file = await dir.write(
      "pcsync.yaml",
      rolloutManifest(prometheus.url, "v15", {
        prometheus: ["      basic_auth:", "        username: pcsync", "        password_env: PROM_PASSWORD"],
      }).replace("bake: 4s", "bake: 0s"),
    );
    const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
      cwd: dir.path,
      env: { ...server.env, PROM_PASSWORD: "not-the-password" },
      timeoutMs: 60_000,
    }).done;
    expect(ended.code, ended.stderr).toBe(4);
    expect(ended.stderr).toContain(
      `project 2 FAILS: Prometheus at ${prometheus.url} refused pcsync's credentials (401)`,
    );
    expect(ended.stdout).toContain('Rollout halted in wave "canary"');
    expect(ended.stderr).not.toContain("not-the-password");
  });

  it.each([
    {
      what: "a password variable that is not set",
      url: "http://127.0.0.1:9",
      auth: ["      basic_auth:", "        username: pcsync", "        password_env: PROM_PASSWORD_UNSET"],
      env: {},
      says: "rollout.health.prometheus.basic_auth.password_env names the environment variable PROM_PASSWORD_UNSET, which is not set (or is empty)",
    },
    {
      what: "an empty token variable",
      url: "http://127.0.0.1:9",
      auth: ["      bearer_token_env: PROM_TOKEN"],
      env: { PROM_TOKEN: "" },
      says: "rollout.health.prometheus.bearer_token_env names the environment variable PROM_TOKEN",
    },
    {
      what: "a token over plain http to another host",
      url: "http://prometheus.invalid:9090",
      auth: ["      bearer_token_env: PROM_TOKEN"],
      env: { PROM_TOKEN: "a-token-long-enough" },
      says: "Refusing to send Prometheus credentials over plain http to prometheus.invalid:9090",
    },
  ])("refuses $what before the approval, writing nothing", async ({ url, auth, env, says }) => {
    const server = await startServer("seed");
    const dir = await temporaryDirectory();
    try {
      const file = await dir.write("pcsync.yaml", rolloutManifest(url, "v16", { prometheus: auth }));
      const ended = await spawnCli(["apply", "-f", file, "--auto-approve"], {
        cwd: dir.path,
        env: { ...server.env, ...env },
      }).done;
      expect(ended.code, ended.stderr).toBe(1);
      expect(ended.stderr).toContain(says);
      expect(ended.stderr).toContain("nothing was written");
      expect(server.emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);
      expect(existsSync(join(dir.path, ".pcsync"))).toBe(false); // no rollout journal was started
    } finally {
      await dir.remove();
      await server.close();
    }
  });
});
