// End to end: `pcsync logs`, `job`, `frontend` and `completion` as a user runs them, against an
// in-process emulator on both profiles. The CLI runs in-process, but for what needs the built
// binary (a signal to --follow, a shell sourcing the completion script): `npm run build` first.

import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EmulatorData,
  exampleData,
  PROFILE_NAMES,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import { CLI_PATH, spawnCli } from "../support/cli.js";
import { runCliInProcess } from "../support/in-process.js";
import { REPOSITORY } from "../support/paths.js";
import { waitFor } from "../support/wait-for.js";

const FULL_KEY = "ops-key-full";
const SCOPED_KEY = "ops-key-scoped";

/** The example data plus two records of one name, to show how an ambiguous --config is reported. */
function dataWithTwins(): EmulatorData {
  const data = exampleData();
  const [template] = data.records;
  if (!template) throw new Error("the example data has no records");
  for (const id of [10, 11]) {
    data.records.push({ ...template, id, plugin: 7, order: id, name: "Twin", enabled: false });
  }
  // One name in both families: a plugin config and a frontend app.
  data.records.push({ ...template, id: 12, plugin: 7, order: 12, name: "Shared" });
  data.records.push({
    ...template,
    id: 13,
    family: "pipeline_frontend_apps_configs",
    plugin: 41,
    order: 13,
    name: "Shared",
  });
  data.nextIds.record = 14;
  return data;
}

const GEOIP_MESSAGES_NEWEST_FIRST = [
  "Plugin reloaded after config change.",
  "Lookup failed for 198.51.100.300: invalid IP address",
  "GeoIP database is 31 days old; results may be stale.",
  "Resolved 203.0.113.7 to Amsterdam, NL",
  "Looking up 203.0.113.7",
  "Plugin loaded (instance 018fd5a0).",
];

/** The message of a text line: after the time (24), type (5) and source (7) columns. */
function messageOf(line: string): string {
  return line.slice(39);
}

/** Triggers a job the way another client would, without the cost of spawning the CLI. */
async function runJobThroughApi(emulator: RunningEmulator, project: number, config: number, type: string) {
  const response = await fetch(`${emulator.url}/api/projects/${project}/plugin_configs/${config}/job/`, {
    method: "POST",
    headers: { authorization: `Bearer ${FULL_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ job: { type } }),
  });
  expect(response.status).toBe(200);
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

// Tests are independent (each owns the configs it writes to), so they run concurrently.
describe.concurrent.each(PROFILE_NAMES)("ops commands against the %s profile", (profile) => {
  let emulator: RunningEmulator;

  beforeAll(async () => {
    emulator = await startEmulator({
      profile,
      data: dataWithTwins(),
      // The logs tests print the stored entries exactly: no synthesized stream beside them.
      logRate: 0,
      keys: [
        { key: FULL_KEY, scopes: ["*"], projects: "*" },
        { key: SCOPED_KEY, scopes: ["plugin:read", "plugin:write"], projects: "*" },
      ],
    });
  });
  afterAll(async () => {
    await emulator.close();
  });

  const run = (args: string[], key = FULL_KEY) =>
    runCliInProcess(args, { env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: key }, cwd: REPOSITORY });

  // These read the GeoIP config of project 1, whose entries no test adds to.
  describe("logs", () => {
    it("prints the entries newest first, in aligned columns", async () => {
      const result = await run(["logs", "--project", "1", "--config", "GeoIP"]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const printed = lines(result.stdout);
      expect(printed.map((line) => messageOf(line))).toEqual(GEOIP_MESSAGES_NEWEST_FIRST);
      expect(printed[0]).toBe("2024-06-01T11:00:00.000Z INFO  SYSTEM  Plugin reloaded after config change.");
    });

    it("filters by type (any case, repeated; --level is the same), search text and time", async () => {
      const byType = await run(["logs", "--project", "1", "--config", "1", "--type", "warn,info"]);
      expect(byType).toMatchObject({ code: 0, stderr: "" });
      expect(lines(byType.stdout).map((line) => line.split(/\s+/)[1])).toEqual(["INFO", "WARN", "INFO"]);
      // The contract's --type and its synonym --level join, with no warning: both are kept.
      const both = await run([
        "logs",
        "--project",
        "1",
        "--config",
        "1",
        "--type",
        "warn",
        "--level",
        "ERROR",
      ]);
      expect(both).toMatchObject({ code: 0, stderr: "" });
      expect(lines(both.stdout).map((line) => line.split(/\s+/)[1])).toEqual(["ERROR", "WARN"]);

      const bySearch = await run(["logs", "--project", "1", "--config", "GeoIP", "--search", "amsterdam"]);
      expect(lines(bySearch.stdout).map((line) => messageOf(line))).toEqual([
        "Resolved 203.0.113.7 to Amsterdam, NL",
      ]);

      const byTime = await run([
        "logs",
        "--project",
        "1",
        "--config",
        "GeoIP",
        "--since",
        "2024-06-01T00:00:00Z",
        "--until",
        "2024-06-01T10:00:00Z",
      ]);
      expect(lines(byTime.stdout).map((line) => messageOf(line))).toEqual(
        GEOIP_MESSAGES_NEWEST_FIRST.slice(1, 3),
      );

      // A relative --since: the example entries are long past, so nothing matches, and stderr says so.
      const recent = await run(["logs", "--project", "1", "--config", "GeoIP", "--since", "15m"]);
      expect(recent).toMatchObject({
        code: 0,
        stdout: "",
        stderr: '(no log entries of "GeoIP" (id 1) match)\n',
      });
    });

    it("shows the newest --limit entries and says that others were left out", async () => {
      const result = await run(["logs", "--project", "1", "--config", "GeoIP", "--limit", "2"]);
      expect(result.code).toBe(0);
      expect(lines(result.stdout).map((line) => messageOf(line))).toEqual(
        GEOIP_MESSAGES_NEWEST_FIRST.slice(0, 2),
      );
      expect(result.stderr).toContain("showing the newest 2 entries");
    });

    it("prints one JSON object per line with --format json", async () => {
      const result = await run([
        "logs",
        "--project",
        "1",
        "--config",
        "GeoIP",
        "--format",
        "json",
        "--level",
        "info",
      ]);
      expect(result.code).toBe(0);
      const entries = lines(result.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(entries).toHaveLength(2);
      expect(entries[0]).toMatchObject({
        id: "018fd5a0-0000-7000-8000-000000000006",
        type: "INFO",
        source: "SYSTEM",
        plugin_config_id: 1,
        timestamp: "2024-06-01T11:00:00.000Z",
      });
    });

    it("follows: prints what arrives, once, oldest first, and stops cleanly on SIGINT", async () => {
      // Project 2's GeoIP gets its entries from jobs only, so this test owns them.
      await runJobThroughApi(emulator, 2, 5, "first");
      const follower = spawnCli(
        ["logs", "--project", "2", "--config", "GeoIP", "--follow", "--interval", "0.1"],
        { env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: FULL_KEY } },
      );
      const printed = (text: string) => () => follower.soFar().stdout.includes(text);
      try {
        // The first wait includes the process's start, which a loaded machine can slow past 8 s.
        await waitFor(printed("Job first queued"), "the first job's entry", 30_000);
        await runJobThroughApi(emulator, 2, 5, "second");
        await waitFor(printed("Job second queued"), "the second job's entry", 8_000);
        // Several more polls see both entries again; neither may be printed twice.
        await new Promise((resolve) => setTimeout(resolve, 600));
      } finally {
        follower.child.kill("SIGINT");
      }
      const run = await follower.done;
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(run.stderr).toBe("");
      expect(lines(run.stdout).map((line) => messageOf(line))).toEqual([
        "Job first queued",
        "Job second queued",
      ]);
    });
  });

  describe("job", () => {
    it("runs a job on a plugin config (--type names it, as --job does), and the config's logs show it", async () => {
      const result = await run([
        "job",
        "--project",
        "1",
        "--config",
        "Legacy S3",
        "--type",
        "Export historical events",
        "--payload",
        '{"dateFrom": "2024-06-01"}',
      ]);
      expect(result).toMatchObject({
        code: 0,
        stdout:
          'job "Export historical events" queued for "Legacy S3" (id 3) in plugin_configs of project 1\n',
        stderr: "follow it with: pcsync logs --project 1 --config 3 --follow\n",
      });
      const logged = emulator.snapshot().logEntries.filter((entry) => entry.plugin_config_id === 3);
      expect(logged.map((entry) => entry.message)).toContain("Job Export historical events queued");
    });

    it("prints the queued job as JSON with --format json", async () => {
      const result = await run([
        "job",
        "--project",
        "1",
        "--config",
        "3",
        "--job",
        "sync",
        "--format",
        "json",
      ]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(result.stdout)).toEqual({
        job: "sync",
        status: "queued",
        project: "1",
        family: "plugin_configs",
        config: { id: 3, name: "Legacy S3" },
      });
    });

    it("runs a job on a frontend app config", async () => {
      const result = await run([
        "job",
        "--project",
        "1",
        "--family",
        "pipeline_frontend_apps_configs",
        "--config",
        "Notification Bar",
        "--job",
        "refresh",
      ]);
      expect(result).toMatchObject({
        code: 0,
        stdout:
          'job "refresh" queued for "Notification Bar" (id 4) in pipeline_frontend_apps_configs of project 1\n',
        stderr: "",
      });
    });

    if (profile === "posthog-2024") {
      it("explains that a scoped key is refused, without printing the key", async () => {
        const result = await run(["job", "--project", "1", "--config", "3", "--job", "x"], SCOPED_KEY);
        expect(result).toMatchObject({ code: 1, stdout: "" });
        expect(result.stderr).toContain(
          "403 POST /api/projects/1/plugin_configs/3/job/: This action does not support Personal API Key access",
        );
        expect(result.stderr).toContain('use an unscoped (legacy) key or a key with the "*" scope');
        expect(result.stderr).not.toContain(SCOPED_KEY);
      });
    } else {
      it("accepts a scoped key with plugin:write", async () => {
        const result = await run(["job", "--project", "1", "--config", "3", "--job", "x"], SCOPED_KEY);
        expect(result.code).toBe(0);
      });
    }
  });

  describe("frontend", () => {
    it("prints the module of a frontend app config", async () => {
      const result = await run([
        "frontend",
        "--project",
        "1",
        "--family",
        "pipeline_frontend_apps_configs",
        "--config",
        "Notification Bar",
      ]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout).toContain("export function getFrontendApp(");
      expect(result.stdout).toContain('"pluginConfigId":4');
    });

    it("prints the module of a plugin config named by id", async () => {
      const result = await run(["frontend", "--project", "1", "--config", "1"]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('"pluginConfigId":1');
    });

    it(
      profile === "posthog-2024" ? "refuses a scoped key, with the hint" : "serves a scoped key",
      async () => {
        const result = await run(["frontend", "--project", "1", "--config", "1"], SCOPED_KEY);
        if (profile === "posthog-2024") {
          expect(result).toMatchObject({ code: 1, stdout: "" });
          expect(result.stderr).toContain("refuses scoped personal API keys for frontend modules");
        } else {
          expect(result.code).toBe(0);
        }
      },
    );
  });

  describe("--config resolution", () => {
    it("names the ids when a name matches several records", async () => {
      const result = await run(["frontend", "--project", "1", "--config", "Twin"]);
      expect(result).toMatchObject({
        code: 1,
        stdout: "",
        stderr:
          'pcsync: 2 configs in plugin_configs of project 1 are named "Twin" (ids 10, 11); pass one id with --config\n',
      });
    });

    it("lists the names the families have when none matches", async () => {
      const result = await run(["logs", "--project", "1", "--config", "GeoLP"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^pcsync: no config named "GeoLP" in project 1 \(plugin_configs or pipeline_frontend_apps_configs\); plugin_configs has: GeoIP \(1\), .*; pipeline_frontend_apps_configs has: Notification Bar \(4\)/,
      );
      const inOne = await run(["logs", "--project", "1", "--family", "plugin_configs", "--config", "GeoLP"]);
      expect(inOne.stderr).toMatch(
        /^pcsync: no config named "GeoLP" in plugin_configs of project 1; it has: GeoIP \(1\), /,
      );
    });

    it("reports an unknown id", async () => {
      const result = await run(["job", "--project", "1", "--config", "99", "--job", "x"]);
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toBe(
        "pcsync: no config with id 99 in project 1 (plugin_configs or pipeline_frontend_apps_configs); list them with: pcsync export --project 1\n",
      );
    });

    it("finds a frontend app without --family, by id or name, and names both ids of a name in both families", async () => {
      const [byId, byName, shared, sharedPinned] = await Promise.all([
        run(["frontend", "--project", "1", "--config", "4"]),
        run(["job", "--project", "1", "--config", "Notification Bar", "--job", "refresh"]),
        run(["frontend", "--project", "1", "--config", "Shared"]),
        run([
          "frontend",
          "--project",
          "1",
          "--family",
          "pipeline_frontend_apps_configs",
          "--config",
          "Shared",
        ]),
      ]);
      expect(byId).toMatchObject({ code: 0, stderr: "" });
      expect(byId.stdout).toContain('"pluginConfigId":4');
      // posthog-2024 lists frontend apps in plugin_configs too: one record, found in both.
      const family = profile === "posthog-2024" ? "plugin_configs" : "pipeline_frontend_apps_configs";
      expect(byName).toMatchObject({
        code: 0,
        stdout: `job "refresh" queued for "Notification Bar" (id 4) in ${family} of project 1\n`,
      });
      // posthog-2024's plugin_configs lists the app too; the refusal names each id where --family
      // finds it, so that the --family it asks for is the way out on both servers.
      expect(shared).toMatchObject({
        code: 1,
        stdout: "",
        stderr: `pcsync: "Shared" names configs in both families of project 1 (id 12 in plugin_configs, id 13 in pipeline_frontend_apps_configs); pass --family with the one you mean, or its id with --config\n`,
      });
      expect(sharedPinned.code).toBe(0);
      expect(sharedPinned.stdout).toContain('"pluginConfigId":13');
    });

    it("takes --family plugin_configs for the plugin config of a name a frontend app shares", async () => {
      const job = await run([
        "job",
        "--project",
        "1",
        "--family",
        "plugin_configs",
        "--config",
        "Shared",
        "--job",
        "pinned-shared",
      ]);
      expect(job).toMatchObject({
        code: 0,
        stdout: 'job "pinned-shared" queued for "Shared" (id 12) in plugin_configs of project 1\n',
      });
      // The job went to the plugin config: its logs, found the same way, say so.
      const logs = await run(["logs", "--project", "1", "--family", "plugin_configs", "--config", "Shared"]);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toContain("Job pinned-shared queued");
    });

    it("says that a frontend app has no logs, found without --family", async () => {
      const result = await run(["logs", "--project", "1", "--config", "Notification Bar"]);
      if (profile === "posthog-2024") {
        // Listed in plugin_configs too, where its logs are.
        expect(result.code).toBe(0);
      } else {
        expect(result).toMatchObject({
          code: 1,
          stdout: "",
          stderr:
            'pcsync: "Notification Bar" (id 4) is a config of pipeline_frontend_apps_configs, which has no logs: logs exist only for plugin_configs\n',
        });
      }
    });
  });
});

describe.concurrent("flags refused before any request", () => {
  // Nothing listens here: reaching the network would fail differently from the expected message.
  const run = (args: string[]) =>
    runCliInProcess(args, {
      env: { PCSYNC_BASE_URL: "http://127.0.0.1:9", PCSYNC_API_KEY: FULL_KEY },
      cwd: REPOSITORY,
    });

  it("logs: the frontend family has no logs", async () => {
    const result = await run([
      "logs",
      "--project",
      "1",
      "--family",
      "pipeline_frontend_apps_configs",
      "--config",
      "Notification Bar",
    ]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(
      /^pcsync: the pipeline_frontend_apps_configs family has no logs: logs exist only for plugin_configs/,
    );
  });

  it("logs: an unknown --type or --since says what to use instead", async () => {
    const badType = await run(["logs", "--project", "1", "--config", "GeoIP", "--type", "fatal"]);
    expect(badType).toMatchObject({ code: 1, stdout: "" });
    expect(badType.stderr).toContain("--type (or --level) must be one of DEBUG, LOG, INFO, WARN, ERROR");
    const badSince = await run(["logs", "--project", "1", "--config", "GeoIP", "--since", "yesterday"]);
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toContain("or a duration ago (e.g. 30s, 15m, 2h, 1d");
  });

  it("job: a --payload that is not JSON, quoting the parse error", async () => {
    const result = await run([
      "job",
      "--project",
      "1",
      "--config",
      "3",
      "--job",
      "x",
      "--payload",
      "{dateFrom: 1}",
    ]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(
      /^pcsync: --payload is not valid JSON \(.+position 1.*\); quote it for the shell/,
    );
  });
});

describe("pcsync completion", () => {
  it("registers a bash completion for pcsync once sourced", () => {
    const output = execFileSync(
      "bash",
      ["-c", 'source <("$0" "$1" completion bash) && complete -p pcsync', process.execPath, CLI_PATH],
      { encoding: "utf8" },
    );
    expect(output.trim()).toBe("complete -F _pcsync_completion pcsync");
  });

  it("rejects an unknown shell with the choices", async () => {
    const result = await runCliInProcess(["completion", "powershell"], { env: {}, cwd: REPOSITORY });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Allowed choices are bash, zsh, fish.");
  });
});
