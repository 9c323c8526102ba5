// The API key is never handed to anyone: every command, every output format, --verbose traces,
// error paths (401, 403, 404, 500, refused connection, a server that echoes the key back) and
// every file pcsync writes are searched for the key, also URL-encoded, hex and base64-encoded.
// Each test searches the outputs and files of its own runs. The runs are in-process, on a CLI of
// the test's own (its own registry of secrets); one test spawns the built CLI.

import { readdir, writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { runBuiltCli } from "../support/cli.js";
import { runCliInProcess } from "../support/in-process.js";
import { findLeaks, readFilesIn, type Shown } from "../support/leaks.js";
import { KEY, MANIFEST_A, MANIFEST_B, reliabilityData } from "../support/scenario.js";
import {
  type Handler,
  page,
  type RecordedRequest,
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
} from "../support/scripted-server.js";
import { writeManifest } from "../support/work-dir.js";
import { openWorkspace } from "../support/workspace.js";

/** The key file a test writes holds the key by design: every other file is searched. */
const KEY_FILE = "key.txt";

/** One test's directory and servers, and what its runs showed, searched by `expectNothingLeaked`. */
async function openScene(onTestFinished: TestContext["onTestFinished"]) {
  const workspace = await openWorkspace(onTestFinished);
  const { directory } = workspace;
  const shown: Shown[] = [];
  const cli = runCliInProcess;
  const note = (label: string, result: { stdout: string; stderr: string }) => {
    shown.push(
      { label: `${label} (stdout)`, text: result.stdout },
      { label: `${label} (stderr)`, text: result.stderr },
    );
  };
  return {
    directory,
    shown,
    note,
    async emulatorWith(options: EmulatorOptions): Promise<RunningEmulator> {
      const emulator = await startEmulator({ data: reliabilityData(), ...options });
      workspace.defer(() => emulator.close());
      return emulator;
    },
    async scriptedServer(handler: Handler): Promise<ScriptedServer> {
      const server = await startScriptedServer(handler);
      workspace.defer(() => server.close());
      return server;
    },
    /** Runs the test's CLI (or `run`) with the key in the environment, unless `env` says otherwise. */
    async run(args: string[], env: NodeJS.ProcessEnv = {}, run: typeof runCliInProcess = cli) {
      const result = await run(args, {
        env: {
          PCSYNC_API_KEY: KEY,
          GITHUB_ACTIONS: "true",
          GITHUB_STEP_SUMMARY: join(directory, "step-summary.md"),
          ...env,
        },
        cwd: directory,
      });
      note(`pcsync ${args.join(" ")}`, result);
      return result;
    },
    /** No form of the key in any output of this test's runs, or in any file in its directory. */
    async expectNothingLeaked(): Promise<void> {
      const files = await readFilesIn(directory, [KEY_FILE]);
      expect(findLeaks(KEY, [...shown, ...files])).toEqual([]);
    },
  };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address !== null ? address.port : 9;
}

/** A server that puts the Authorization header it receives everywhere it can; which way, the project id says. */
function echoingServer() {
  return (request: RecordedRequest, response: ServerResponse) => {
    const authorization = String(request.headers.authorization ?? "");
    const key = authorization.replace(/^Bearer /, "");
    const project = /^\/api\/projects\/(\d+)\//.exec(request.url)?.[1];
    const error = (status: number, detail: string) =>
      sendJson(response, status, { type: "server_error", code: "error", detail, attr: null });
    switch (project) {
      case "11":
        return error(500, `Internal error while checking ${authorization}`);
      case "12":
        response.writeHead(500, { "content-type": "text/plain" });
        response.end(`upstream rejected Authorization: ${authorization} (key=${encodeURIComponent(key)})`);
        return;
      case "13":
        return sendJson(
          response,
          200,
          page(
            [record(1)],
            `http://127.0.0.2:1/api/projects/13/plugin_configs/?token=${encodeURIComponent(key)}`,
            2,
          ),
        );
      case "14":
        return error(401, `Personal API key ${key} is invalid.`);
      case "15":
        return sendJson(
          response,
          429,
          { type: "throttled_error", code: "throttled", detail: `Key ${key} was throttled.`, attr: null },
          { "retry-after": "600" },
        );
      case "16":
        return sendJson(response, 200, page([record(1, { enabled: key })]));
      case "18":
        return sendJson(response, 200, page([record(1, { name: key, description: authorization })]));
      default:
        return error(403, `API key ${key} does not have access to the requested project`);
    }
  };
}

describe.concurrent("the API key never appears in output or written files", () => {
  it("through every command, output format and --verbose, on success", async ({ onTestFinished }) => {
    const { directory, shown, emulatorWith, run, expectNothingLeaked } = await openScene(onTestFinished);
    const emulator = await emulatorWith({});
    const manifestA = await writeManifest(directory, MANIFEST_A, "a.yaml");
    const manifestB = await writeManifest(directory, MANIFEST_B, "b.yaml");
    const connection = ["--base-url", emulator.url, "--verbose"];
    const runs: Array<[string[], number]> = [
      [["validate", "-f", manifestA], 0],
      [["plan", "-f", manifestA, ...connection], 0],
      [
        ["plan", "-f", manifestA, ...connection, "--format", "json", "--out", join(directory, "plan-a.json")],
        0,
      ],
      [["plan", "-f", manifestA, ...connection, "--format", "markdown", "--detailed-exitcode"], 2],
      [["apply", "-f", manifestA, ...connection, "--dry-run", "--format", "json"], 0],
      [["apply", "--auto-approve", "-f", manifestA, ...connection], 0],
      [["plan", "-f", manifestB, ...connection, "--out", join(directory, "plan-b.json")], 0],
      [["apply", "--plan", join(directory, "plan-b.json"), ...connection, "--format", "markdown"], 0],
      [["apply", "--auto-approve", "-f", manifestB, ...connection, "--format", "json"], 0],
      [["export", "--project", "1", ...connection], 0],
      [["export", "--project", "1", ...connection, "-o", join(directory, "exported.yaml")], 0],
      [["export", "--all", "--templates", ...connection, "-o", join(directory, "fleet.yaml")], 0],
      [["logs", "--project", "1", "--config", "GeoIP", ...connection], 0],
      [["logs", "--project", "1", "--config", "GeoIP", ...connection, "--format", "json"], 0],
      [["job", "--project", "1", "--config", "GeoIP", "--type", "sync", ...connection], 0],
      [
        [
          "frontend",
          "--project",
          "1",
          "--family",
          "pipeline_frontend_apps_configs",
          "--config",
          "Notification Bar",
          ...connection,
        ],
        0,
      ],
      [["serve", "--help"], 0],
      [["completion", "bash"], 0],
      [["completion", "zsh"], 0],
      [["completion", "fish"], 0],
      [["--help"], 0],
    ];
    for (const [args, expected] of runs) {
      const result = await run(args);
      expect(result.code, `pcsync ${args.join(" ")}\n${result.stderr}`).toBe(expected);
    }
    // --verbose did trace requests, so the traces were searched too; so were the files written.
    expect(shown.some((output) => /GET \/api\/projects\/1\/plugin_configs\//.test(output.text))).toBe(true);
    expect(await readdir(directory)).toEqual(
      expect.arrayContaining(["plan-a.json", "plan-b.json", "exported.yaml", "step-summary.md"]),
    );
    expect(shown).toHaveLength(2 * runs.length);
    await expectNothingLeaked();
  });

  it("on error paths: 401, 403, 404, stale plan, refused connection, bad key files", async ({
    onTestFinished,
  }) => {
    const { directory, shown, emulatorWith, run, expectNothingLeaked } = await openScene(onTestFinished);
    const wrongKey = await emulatorWith({
      keys: [{ key: "phx_some_other_key_entirely", scopes: ["*"], projects: "*" }],
    });
    const readOnly = await emulatorWith({ keys: [{ key: KEY, scopes: ["plugin:read"], projects: "*" }] });
    const otherProject = await emulatorWith({ keys: [{ key: KEY, scopes: ["*"], projects: [2] }] });
    const fine = await emulatorWith({});
    const manifestA = await writeManifest(directory, MANIFEST_A, "a.yaml");
    const keyFile = join(directory, KEY_FILE);
    await writeFile(keyFile, `${KEY}\n`, { mode: 0o600 });
    const refused = `http://127.0.0.1:${await closedPort()}`;
    const verbose = ["--verbose"];
    const runs: Array<[string[], number, NodeJS.ProcessEnv?]> = [
      [["plan", "-f", manifestA, "--base-url", wrongKey.url, ...verbose], 1],
      [["export", "--project", "1", "--base-url", wrongKey.url, ...verbose], 1],
      [["apply", "--auto-approve", "-f", manifestA, "--base-url", readOnly.url, ...verbose], 1],
      [
        [
          "job",
          "--project",
          "1",
          "--config",
          "GeoIP",
          "--type",
          "sync",
          "--base-url",
          readOnly.url,
          ...verbose,
        ],
        1,
      ],
      [["export", "--project", "1", "--base-url", otherProject.url, ...verbose], 1],
      [["export", "--project", "99", "--base-url", fine.url, ...verbose], 1],
      [["frontend", "--project", "1", "--config", "9999", "--base-url", fine.url, ...verbose], 1],
      [["plan", "-f", manifestA, "--base-url", fine.url, "--out", join(directory, "stale.json")], 0],
      [["apply", "--auto-approve", "-f", manifestA, "--base-url", fine.url], 0],
      [["apply", "--plan", join(directory, "stale.json"), "--base-url", fine.url, ...verbose], 3],
      // Every retry traced, each of the client's durations a tenth as long (12 s of backoff otherwise).
      [["plan", "-f", manifestA, "--base-url", refused, ...verbose], 1, { PCSYNC_TIME_SCALE: "0.1" }],
      [["plan", "-f", manifestA, "--base-url", fine.url], 1, { PCSYNC_API_KEY: `${KEY} ${KEY}` }],
      [["plan", "-f", manifestA, "--base-url", "http://example.com"], 1],
    ];
    for (const [args, expected, env] of runs) {
      const result = await run(args, env);
      expect(result.code, `pcsync ${args.join(" ")}\n${result.stderr}`).toBe(expected);
    }
    // A key read from a file is known only once this run reads it: each run has its own secrets,
    // so the key the runs above registered is not known to this one.
    const fromFile = ["plan", "-f", manifestA, "--base-url", fine.url, "--api-key-file", keyFile, ...verbose];
    const result = await run(fromFile, { PCSYNC_API_KEY: undefined });
    expect(result.code, `pcsync ${fromFile.join(" ")}\n${result.stderr}`).toBe(0);
    expect(shown).toHaveLength(2 * (runs.length + 1));
    await expectNothingLeaked();
  }, 60_000);

  it("from a server that echoes the key in errors, non-JSON bodies, next links and records", async ({
    onTestFinished,
  }) => {
    const { shown, scriptedServer, run, expectNothingLeaked } = await openScene(onTestFinished);
    const server = await scriptedServer(echoingServer());
    const connection = ["--base-url", server.url, "--verbose", "--timeout", "2"];
    for (const project of ["11", "12", "13", "14", "15", "16", "17"]) {
      const result = await run(["export", "--project", project, ...connection]);
      expect(result.code, `project ${project}: ${result.stderr}`).toBe(1);
    }
    // Reflected into the data itself, the key is kept as read (data is never altered), so the
    // export, a manifest that must plan back to that data, is refused, naming where, not what.
    const reflected = await run(["export", "--project", "18", ...connection]);
    expect(reflected.code, reflected.stderr).toBe(1);
    expect(reflected.stdout).toBe("");
    expect(reflected.stderr).toMatch(
      /refusing to write the exported manifest: the API key's text appears in it \(project 18 pipeline_frontend_apps_configs record 1, fields name, description\)/,
    );
    // The echo really happened: the key was in what the server sent back.
    expect(server.requests.length).toBeGreaterThan(6);
    expect(shown).toHaveLength(2 * 8);
    await expectNothingLeaked();
  }, 60_000);

  // The in-process runs above write to streams they are given; the built CLI's main writes its own
  // process's stdout and stderr, through the same redacting edge.
  it("from the built CLI, whose process writes its own streams", async ({ onTestFinished }) => {
    const { directory, shown, note, emulatorWith, scriptedServer, expectNothingLeaked } =
      await openScene(onTestFinished);
    const emulator = await emulatorWith({});
    const server = await scriptedServer(echoingServer());
    const manifestA = await writeManifest(directory, MANIFEST_A, "a.yaml");
    const env = { PCSYNC_API_KEY: KEY };
    const spawned = [
      ["apply", "--auto-approve", "-f", manifestA, "--base-url", emulator.url, "--verbose"],
      ["export", "--project", "11", "--base-url", server.url, "--verbose"],
      ["export", "--project", "12", "--base-url", server.url, "--verbose"],
    ];
    for (const args of spawned)
      note(`built pcsync ${args.join(" ")}`, await runBuiltCli(args, { env, cwd: directory }));
    expect(shown).toHaveLength(2 * spawned.length);
    await expectNothingLeaked();
  });
});
