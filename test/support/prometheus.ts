// A real Prometheus for the end-to-end tests (Debian's prometheus package, which .ci/run installs):
// started on a free port over a temporary directory, scraping the targets given, optionally asking
// for a user and password (its --web.config.file), stopped when the test finishes. Also: whether
// it is installed, and the `it` that runs a test needing it (skipped with a note outside CI).

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { it } from "vitest";
import { freePort } from "./free-port.js";

function hasCommand(name: string): boolean {
  return spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0;
}

export const prometheusInstalled = hasCommand("prometheus") && hasCommand("promtool");
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";

/**
 * `it` for a test that needs Prometheus: without it, skipped with a note `what` (outside CI), and in
 * CI run, so that it fails: CI installs it, and a test that silently skips proves nothing.
 */
export function itWithPrometheus(what: string): typeof it | typeof it.skip {
  if (!prometheusInstalled && !inCi)
    console.warn(`note: prometheus/promtool not found: ${what} skipped (apt-get install prometheus)`);
  return prometheusInstalled || inCi ? it : it.skip;
}

export function requirePrometheus(): void {
  if (!prometheusInstalled)
    throw new Error(
      "prometheus and promtool are not installed: .ci/run installs Debian's prometheus package",
    );
}

export interface PrometheusOptions {
  /** A directory of the test's (the config and the database go there). */
  directory: string;
  /** host:port of each target, scraped every `scrapeInterval` (default 1s). */
  targets: readonly string[];
  scrapeInterval?: string;
  /** Lines for prometheus.yml beyond the scrape config (e.g. `rule_files:`). */
  extraConfig?: readonly string[];
  /** A user Prometheus asks for, and the bcrypt hash of its password (Prometheus's web config). */
  basicAuth?: { username: string; bcryptHash: string };
}

export interface RunningPrometheus {
  url: string;
  /** What Prometheus wrote on stderr so far (its errors), for failure messages. */
  log(): string;
  /** The first value of an instant query; undefined when there is none or Prometheus is not up. */
  query(expression: string): Promise<number | undefined>;
}

export async function startPrometheus(
  onTestFinished: (done: () => Promise<void>) => void,
  options: PrometheusOptions,
): Promise<RunningPrometheus> {
  requirePrometheus();
  const { directory } = options;
  const port = await freePort();
  const interval = options.scrapeInterval ?? "1s";
  const config = join(directory, "prometheus.yml");
  await writeFile(
    config,
    [
      "global:",
      `  scrape_interval: ${interval}`,
      `  scrape_timeout: ${interval === "1s" ? "500ms" : interval}`,
      "  evaluation_interval: 500ms",
      ...(options.extraConfig ?? []),
      "scrape_configs:",
      "  - job_name: under-test",
      "    static_configs:",
      `      - targets: [${options.targets.map((target) => JSON.stringify(target)).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const args = [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(directory, "tsdb")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=error",
  ];
  const { basicAuth } = options;
  if (basicAuth !== undefined) {
    const webConfig = join(directory, "web.yml");
    await writeFile(
      webConfig,
      `basic_auth_users:\n  ${JSON.stringify(basicAuth.username)}: ${JSON.stringify(basicAuth.bcryptHash)}\n`,
    );
    args.push(`--web.config.file=${webConfig}`);
  }
  const prometheus: ChildProcess = spawn("prometheus", args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  prometheus.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    log += chunk;
  });
  onTestFinished(async () => {
    prometheus.kill("SIGTERM");
    if (prometheus.exitCode === null) await new Promise((resolve) => prometheus.once("exit", resolve));
  });
  const url = `http://127.0.0.1:${port}`;
  const authorization =
    basicAuth === undefined
      ? undefined
      : `Basic ${Buffer.from(`${basicAuth.username}:${BCRYPT_FIXTURE_PASSWORDS[basicAuth.bcryptHash] ?? ""}`).toString("base64")}`;
  return {
    url,
    log: () => log,
    async query(expression) {
      try {
        const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`, {
          headers: authorization === undefined ? {} : { authorization },
        });
        const body = (await response.json()) as { data?: { result?: { value: [number, string] }[] } };
        const value = body.data?.result?.[0]?.value[1];
        return value === undefined ? undefined : Number(value);
      } catch {
        return undefined; // not up yet
      }
    },
  };
}

/**
 * A password and its bcrypt hash (cost 4, made once with the system's crypt(3)), for a Prometheus
 * that asks for one: tests cannot make bcrypt hashes without a dependency, and need only one.
 */
export const PROMETHEUS_TEST_PASSWORD = "pcsync-prom-test-password";
export const PROMETHEUS_TEST_PASSWORD_HASH = "$2b$04$O.TtjygsLQt47aCSuSdxoOuOEC5Celv1aUymemv9dDZVLQpaKtCbK";
const BCRYPT_FIXTURE_PASSWORDS: Record<string, string> = {
  [PROMETHEUS_TEST_PASSWORD_HASH]: PROMETHEUS_TEST_PASSWORD,
};
