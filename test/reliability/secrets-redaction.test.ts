// Redaction happens only where bytes leave pcsync, and covers every form of the key: a server that
// echoes the key hex-, base64- or URL-encoded gets it shown as [REDACTED]; a record holding the
// key's text is planned, applied and verified as it is (a short key converges); documents that are
// read back (saved plans, JSON plans, exports) are refused rather than altered, naming the record
// but never the value; every file pcsync creates that holds remote data is 0600. The runs are
// in-process, on a CLI of the test's own (its own registry of secrets); one test spawns the built CLI.

import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { type EmulatorData, exampleData, startEmulator } from "../../src/emulator/index.js";
import { runBuiltCli } from "../support/cli.js";
import { runCliInProcess } from "../support/in-process.js";
import { findLeaks } from "../support/leaks.js";
import { KEY, reliabilityData } from "../support/scenario.js";
import { type RecordedRequest, sendJson, startScriptedServer } from "../support/scripted-server.js";
import { writeManifest } from "../support/work-dir.js";
import { openWorkspace } from "../support/workspace.js";

/** Where the key shows in `text`, in any form: empty when nowhere. */
function leaksIn(text: string): string[] {
  return findLeaks(KEY, [{ label: "output", text }]);
}

/** A directory of the test's own; `run` runs the CLI there (each run with secrets of its own) with the key in the environment. */
async function openScene(onTestFinished: TestContext["onTestFinished"]) {
  const { directory, defer } = await openWorkspace(onTestFinished);
  const cli = runCliInProcess;
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    cli(args, { env: { PCSYNC_API_KEY: KEY, ...env }, cwd: directory });
  return { directory, defer, cli, run };
}

const base64 = (text: string) => Buffer.from(text).toString("base64");
const base64url = (text: string) => Buffer.from(text).toString("base64url");
const hex = (text: string) => Buffer.from(text).toString("hex");

/** How the server echoes the Authorization header into its error, by project id. */
const ECHOES: Record<string, (authorization: string, key: string) => string> = {
  "21": (_auth, key) => `key ${base64(key)} is not valid`,
  "22": (_auth, key) => `key ${base64url(key)} is not valid`,
  "23": (_auth, key) => `key ${hex(key)} is not valid`,
  "24": (_auth, key) => `key ${hex(key).toUpperCase()} is not valid`,
  // "Bearer " is 7 bytes: after 0, 1 and 2 more bytes the key starts at each of the 3 alignments.
  "25": (auth) => `header ${base64(`${auth}`)} rejected`,
  "26": (auth) => `header ${base64(`x${auth};`)} rejected`,
  "27": (auth) => `header ${base64(`xy${auth};;`)} rejected`,
  "28": (auth) => `header ${base64url(`z${auth}`)} rejected`,
  "29": (_auth, key) => `see /login?token=${encodeURIComponent(key)}`,
  // A JSON document quoted in the message, escaped as PHP does (\/).
  "30": (_auth, key) => `upstream said ${JSON.stringify({ token: key }).replaceAll("/", "\\/")}`,
};

function echoingServer() {
  return (request: RecordedRequest, response: ServerResponse) => {
    const authorization = String(request.headers.authorization ?? "");
    const key = authorization.replace(/^Bearer /, "");
    const project = /^\/api\/projects\/(\d+)\//.exec(request.url)?.[1] ?? "";
    const echo = ECHOES[project];
    if (project === "31") {
      // Not JSON: the text is shown as an excerpt, cut near the key.
      response.writeHead(400, { "content-type": "text/plain" });
      response.end(`${"x".repeat(190)} ${authorization} and ${base64(authorization)}`);
      return;
    }
    sendJson(response, 400, {
      type: "validation_error",
      code: "invalid",
      detail: echo ? echo(authorization, key) : `no echo for ${project}`,
      attr: null,
    });
  };
}

describe.concurrent("a server that echoes the key encoded", () => {
  it("gets it shown as [REDACTED], in errors and --verbose traces, in every form", async ({
    onTestFinished,
  }) => {
    const { defer, run } = await openScene(onTestFinished);
    const server = await startScriptedServer(echoingServer());
    defer(() => server.close());
    const projects = [...Object.keys(ECHOES), "31"];
    const runs = await Promise.all(
      projects.flatMap((project) =>
        [[], ["--verbose"]].map(async (verbose) => {
          const args = ["export", "--project", project, "--base-url", server.url, ...verbose];
          return { args, result: await run(args) };
        }),
      ),
    );
    for (const { args, result } of runs) {
      const label = `pcsync ${args.join(" ")}`;
      expect(result.code, `${label}\n${result.stderr}`).toBe(1);
      expect(leaksIn(result.stdout + result.stderr), label).toEqual([]);
      // The message is there, with the key replaced, and the reader is told why.
      expect(result.stderr, label).toMatch(/^pcsync: 400 GET .*\[REDACTED\]/m);
      expect(result.stderr, label).toMatch(/^note: the API key's text appeared .* shown as \[REDACTED\]$/m);
    }
    expect(server.requests.length).toBeGreaterThanOrEqual(runs.length);
  });

  // The in-process runs write to streams they are given; the built CLI's main writes its own
  // process's stdout and stderr, through the same redacting edge.
  it("from the built CLI too, whose process writes its own streams", async ({ onTestFinished }) => {
    const { defer } = await openWorkspace(onTestFinished);
    const server = await startScriptedServer(echoingServer());
    defer(() => server.close());
    const results = await Promise.all(
      ["26", "31"].map((project) =>
        runBuiltCli(["export", "--project", project, "--base-url", server.url, "--verbose"], {
          env: { PCSYNC_API_KEY: KEY },
        }),
      ),
    );
    for (const result of results) {
      expect(result.code, result.stderr).toBe(1);
      expect(leaksIn(result.stdout + result.stderr)).toEqual([]);
      expect(result.stderr).toContain("[REDACTED]");
      expect(result.stderr).not.toMatch(/^\s+at /m);
    }
  });
});

describe("a key that is printed before pcsync reads it", () => {
  it("in a manifest value an error quotes, or given to a flag that does not exist", async ({
    onTestFinished,
  }) => {
    const { directory, run } = await openScene(onTestFinished);
    const interpolated = "phx_interpolated_9f8e7d6c5b4a";
    const typed = "phx_typed_on_the_command_line_1a2b3c";
    const manifest = await writeManifest(
      directory,
      `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: \${PCSYNC_API_KEY}
`,
      "interpolated.yaml",
    );
    const results = [
      await run(["validate", "-f", manifest], { PCSYNC_API_KEY: interpolated }),
      await run(["plan", "-f", manifest, "--base-url", "http://127.0.0.1:9"], {
        PCSYNC_API_KEY: interpolated,
      }),
      await run(["plan", "-f", manifest, `--api-key=${typed}`]),
      await run(["plan", "-f", manifest, "--api-key", typed]),
    ];
    for (const result of results) {
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout + result.stderr).not.toContain(interpolated.slice(0, 12));
      expect(result.stdout + result.stderr).not.toContain(typed.slice(0, 12));
    }
    // The manifest's reference is refused by name before its value could be quoted; the key flag
    // is answered by its name only, with how to pass the key.
    for (const result of results.slice(0, 2)) expect(result.stderr).toContain("${PCSYNC_API_KEY} is refused");
    for (const result of results.slice(2))
      expect(result.stderr).toMatch(/^pcsync: --api-key is not an option: .*PCSYNC_API_KEY/);
  });
});

/** The example data, answering to `key`, with `name` and `description` given to record 3 (Legacy S3). */
function dataWith(key: string, record3: { name?: string; description?: string } = {}): EmulatorData {
  const data = key === KEY ? reliabilityData() : exampleData();
  if (key !== KEY) data.keys = [{ key, scopes: null, projects: "*" }];
  const legacy = data.records.find((record) => record.id === 3);
  if (legacy) Object.assign(legacy, record3);
  return data;
}

describe.concurrent("data that holds the key's text", () => {
  it("converges with a short key that is part of record names", async ({ onTestFinished }) => {
    const { directory, defer, cli: runCli } = await openScene(onTestFinished);
    // The emulator accepts this key; "ro" is in "Property", "from", "Error", "project"...
    const shortKey = "ro";
    const emulator = await startEmulator({ data: dataWith(shortKey) });
    defer(() => emulator.close());
    const manifest = await writeManifest(
      directory,
      `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: Property Filter
          plugin: 2
          enabled: true
          description: Drops properties from events
        - name: Error Router
          plugin: 3
          enabled: true
`,
      "short-key.yaml",
    );
    const env = { PCSYNC_API_KEY: shortKey, PCSYNC_BASE_URL: emulator.url };
    const cli = (args: string[]) => runCli(args, { env, cwd: directory });

    const plan = await cli(["plan", "-f", manifest]);
    expect(plan.code, plan.stderr).toBe(0);
    // Property Filter (id 2) is updated in place, not deleted and created again.
    expect(plan.stdout).toContain('update "P[REDACTED]perty Filter" (id 2)');
    expect(plan.stdout).toMatch(/Plan: 1 to create, 1 to update, 0 to delete/);
    expect(plan.stderr).toMatch(/^note: the API key's text appeared \d+ times in the output/m);

    // A journal never holds the key's text, and this data does: its writes would be refused (as a
    // saved plan holding it is), so this apply runs without one.
    const refused = await cli(["apply", "--auto-approve", "-f", manifest]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("its journal line would hold the API key");
    const apply = await cli(["apply", "--auto-approve", "--no-journal", "-f", manifest]);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Apply complete: 1 created, 1 updated, 0 deleted/);
    expect(apply.stdout).not.toMatch(/failed|did not apply/);

    const again = await cli(["plan", "-f", manifest, "--detailed-exitcode"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain("No changes");

    const records = emulator.snapshot().records.filter((record) => record.project === 1 && !record.deleted);
    const propertyFilter = records.filter((record) => record.name === "Property Filter");
    expect(propertyFilter.map((record) => [record.id, record.enabled, record.description])).toEqual([
      [2, true, "Drops properties from events"],
    ]);
    expect(records.filter((record) => record.name === "Error Router")).toHaveLength(1);
  });

  it("is planned and applied as it is, shown redacted, and refused in documents read back", async ({
    onTestFinished,
  }) => {
    const { directory, defer, run } = await openScene(onTestFinished);
    const emulator = await startEmulator({
      data: dataWith(KEY, { name: `Legacy ${KEY}`, description: `token ${base64(`Bearer ${KEY}`)}` }),
    });
    defer(() => emulator.close());
    const manifest = await writeManifest(
      directory,
      `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: 1
          enabled: false
`,
      "reflected.yaml",
    );
    const connection = ["--base-url", emulator.url];
    const savedPlan = join(directory, "reflected-plan.json");
    const exported = join(directory, "reflected-export.yaml");
    const refusal =
      /^pcsync: refusing to write .*: the API key's text appears in it \(project 1 plugin_configs record 3 \(unmanaged\), field name\)/m;

    const text = await run(["plan", "-f", manifest, ...connection]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('"Legacy [REDACTED]" (id 3)');
    expect(text.stderr).toMatch(/^note: the API key's text appeared/m);

    const json = await run(["plan", "-f", manifest, ...connection, "--format", "json"]);
    expect(json.code, json.stderr).toBe(1);
    expect(json.stdout).toBe("");
    expect(json.stderr).toMatch(refusal);

    const saved = await run(["plan", "-f", manifest, ...connection, "--out", savedPlan]);
    expect(saved.code, saved.stderr).toBe(1);
    expect(saved.stderr).toMatch(refusal);
    await expect(stat(savedPlan)).rejects.toThrow(/ENOENT/);

    // Nothing is applied when the JSON output could not be printed.
    emulator.resetRequestLog();
    const applyJson = await run([
      "apply",
      "--auto-approve",
      "-f",
      manifest,
      ...connection,
      "--format",
      "json",
    ]);
    expect(applyJson.code, applyJson.stderr).toBe(1);
    expect(applyJson.stderr).toMatch(/Nothing was changed/);
    expect(emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);

    const apply = await run(["apply", "--auto-approve", "-f", manifest, ...connection]);
    expect(apply.code, apply.stderr).toBe(0);
    expect(apply.stdout).toMatch(/Apply complete: 0 created, 1 updated/);

    const exportRecordRefusal =
      /^pcsync: refusing to write .*: the API key's text appears in it \(project 1 plugin_configs record 3, fields name, description\)/m;
    const toStdout = await run(["export", "--project", "1", ...connection]);
    expect(toStdout.code, toStdout.stderr).toBe(1);
    expect(toStdout.stdout).toBe("");
    expect(toStdout.stderr).toMatch(exportRecordRefusal);
    const toFile = await run(["export", "--project", "1", ...connection, "-o", exported]);
    expect(toFile.code, toFile.stderr).toBe(1);
    expect(toFile.stderr).toMatch(exportRecordRefusal);
    await expect(stat(exported)).rejects.toThrow(/ENOENT/);
    const fleet = await run(["export", "--all", "--templates", ...connection, "-o", exported]);
    expect(fleet.code, fleet.stderr).toBe(1);
    expect(fleet.stderr).toMatch(exportRecordRefusal);
    await expect(stat(exported)).rejects.toThrow(/ENOENT/);

    for (const result of [text, json, saved, applyJson, apply, toStdout, toFile, fleet]) {
      expect(leaksIn(result.stdout + result.stderr)).toEqual([]);
    }
    // The record itself was left as it was.
    const legacy = emulator.snapshot().records.find((record) => record.id === 3);
    expect(legacy?.name).toBe(`Legacy ${KEY}`);
  });
});

describe("long values that hold the key", () => {
  it("are cut and diffed for display without leaving a piece of the key", async ({ onTestFinished }) => {
    const { directory, defer, run } = await openScene(onTestFinished);
    // Markdown cuts values at 200 characters, right inside the key; a word diff would split it
    // where only its first word differs. (The key comes from the server: a manifest holding it is
    // refused at load, see secrets-interpolation.test.ts.)
    const cutInside = `${"y".repeat(180)}${KEY}`;
    const diffedFrom = `${"word ".repeat(15)}A${KEY}B`;
    const diffedTo = `${"word ".repeat(15)}C${KEY.slice(0, 6)}B`;
    const data = reliabilityData();
    for (const [id, description] of [
      [1, cutInside],
      [3, diffedFrom],
    ] as const) {
      const record = data.records.find((item) => item.id === id);
      if (record) record.description = description;
    }
    const emulator = await startEmulator({ data });
    defer(() => emulator.close());
    const manifest = await writeManifest(
      directory,
      `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: 1
          description: null
        - name: Legacy S3
          plugin: 5
          description: ${JSON.stringify(diffedTo)}
`,
      "long.yaml",
    );
    const summary = join(directory, "long-summary.md");
    const env = { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary };
    const connection = ["--base-url", emulator.url];
    const outputs = [
      await run(["plan", "-f", manifest, ...connection], env),
      await run(["plan", "-f", manifest, ...connection, "--format", "markdown"], env),
    ];
    for (const result of outputs) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("[REDACTED]");
      expect(leaksIn(result.stdout + result.stderr)).toEqual([]);
    }
    const written = await readFile(summary, "utf8");
    expect(written).toContain("[REDACTED]");
    expect(leaksIn(written)).toEqual([]);
  });
});

describe("files pcsync writes", () => {
  it("are 0600, whatever mode a file that existed had", async ({ onTestFinished }) => {
    const { directory, defer, run } = await openScene(onTestFinished);
    const emulatorData = join(directory, "modes-emulator.json");
    const emulator = await startEmulator({ data: reliabilityData(), dataFile: emulatorData });
    defer(() => emulator.close());
    const manifest = await writeManifest(
      directory,
      `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: GeoIP
          plugin: 1
          enabled: false
`,
      "modes.yaml",
    );
    const summary = join(directory, "modes-summary.md");
    const keptSummary = join(directory, "modes-summary-kept.md");
    await writeFile(keptSummary, "# earlier steps\n", { mode: 0o644 });
    await chmod(keptSummary, 0o644);
    const keptExport = join(directory, "modes-kept.yaml");
    await writeFile(keptExport, "version: 1\nprojects: {}\n");
    await chmod(keptExport, 0o644);
    const connection = ["--base-url", emulator.url];
    const github = (file: string) => ({ GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: file });

    const runs = [
      await run(
        ["plan", "-f", manifest, ...connection, "--out", join(directory, "modes-plan.json")],
        github(summary),
      ),
      await run(["plan", "-f", manifest, ...connection], github(keptSummary)),
      await run(["export", "--project", "1", ...connection, "-o", join(directory, "modes-export.yaml")]),
      await run(["export", "--project", "1", ...connection, "-o", keptExport]),
    ];
    for (const result of runs) expect(result.code, result.stderr).toBe(0);
    const mode = async (file: string) => ((await stat(file)).mode & 0o777).toString(8);
    expect({
      summary: await mode(summary),
      plan: await mode(join(directory, "modes-plan.json")),
      export: await mode(join(directory, "modes-export.yaml")),
      emulatorData: await mode(emulatorData),
      keptSummary: await mode(keptSummary),
      keptExport: await mode(keptExport),
    }).toEqual({
      summary: "600",
      plan: "600",
      export: "600",
      emulatorData: "600",
      keptSummary: "600",
      keptExport: "600",
    });
    expect(await readFile(keptSummary, "utf8")).toMatch(/^# earlier steps\n/);
    expect(await readFile(keptExport, "utf8")).toContain("GeoIP");
  });
});
