// One vocabulary across commands: `-o/--out` wherever a file is written, `validate --format json`,
// one check and one error for `--family`, `-v`, an answer for `--api-key`, help that says where
// each command finds the base URL, and the base URL mistakes that used to end in a bare 404.
// The CLI runs in-process; the commands that need a server get an in-process emulator.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleData, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { packageVersion } from "../../src/package-files.js";
import { runCliInProcess } from "../support/in-process.js";

const KEY = "phx_vocabulary_test_key_0123456";
let emulator: RunningEmulator;
let directory: string;

beforeAll(async () => {
  emulator = await startEmulator({
    profile: "seed",
    data: exampleData(),
    keys: [{ key: KEY, scopes: null, projects: "*" }],
  });
  directory = await mkdtemp(join(tmpdir(), "pcsync-vocabulary-"));
  await writeFile(
    join(directory, "pcsync.yaml"),
    'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - {name: GeoIP, plugin: 1}\n',
  );
  await writeFile(
    join(directory, "bad.yaml"),
    'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: A\n          plugn: 1\n        - {name: B}\n',
  );
});
afterAll(async () => {
  await emulator.close();
  await rm(directory, { recursive: true, force: true });
});

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return await runCliInProcess(args, { env, cwd: directory });
}

const withServer = () => ({ PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY });

describe("-v", () => {
  it("is --verbose after a command; before one it is answered with both meanings, not guessed", async () => {
    const alone = await run(["-v"]);
    expect(alone).toMatchObject({ code: 1, stdout: "" });
    expect(alone.stderr).toContain("-v is --verbose, an option of each command (pcsync plan -v)");
    expect(alone.stderr).toContain("pcsync --version");
    const verbose = await run(["plan", "-v"], withServer());
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).not.toContain(packageVersion());
    expect(verbose.stderr).toMatch(/^GET \/api\/projects\/1\/plugin_configs\/\?limit=1000 -> 200 /m);
  });
});

describe("--no-color", () => {
  it("turns colour off on any command, wherever it is given, even with FORCE_COLOR", async () => {
    const coloured = await run(["plan"], { ...withServer(), NO_COLOR: undefined, FORCE_COLOR: "1" });
    expect(coloured.stdout).toContain("\u001b[");
    for (const args of [
      ["plan", "--no-color"],
      ["--no-color", "plan"],
    ]) {
      const plain = await run(args, { ...withServer(), NO_COLOR: undefined, FORCE_COLOR: "1" });
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).not.toContain("\u001b[");
      expect(plain.stdout).toContain("No changes");
    }
  });
});

describe("--api-key and --token", () => {
  const secret = "phx_typed_on_the_command_line_42";
  it.each([
    [["plan", "--api-key", secret], "--api-key"],
    [["apply", `--api-key=${secret}`], "--api-key"],
    [["export", "--project", "1", "--api_key", secret], "--api_key"],
    [["logs", "--token", secret, "--project", "1"], "--token"],
    [["--apikey", secret, "plan"], "--apikey"],
  ])("%j is answered with how to pass the key, never showing it", async (args, flag) => {
    const result = await run(args);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `pcsync: ${flag} is not an option: pcsync never takes the API key on the command line, where shell history and process lists would keep it. Set PCSYNC_API_KEY in the environment, or pass --api-key-file PATH naming a file that holds the key.\n`,
    });
  });

  it("leaves a value after -- alone", async () => {
    const result = await run(["validate", "--api-key", "phx_before_the_dashes_77", "--", "--token"]);
    expect(result.stderr).toContain("--api-key is not an option");
    expect(result.stderr).not.toContain("--token");
  });
});

describe("--family", () => {
  const commands: string[][] = [
    ["plan"],
    ["apply"],
    ["export", "--project", "1"],
    ["logs", "--project", "1", "--config", "GeoIP"],
    ["job", "--project", "1", "--config", "GeoIP", "--job", "sync"],
    ["frontend", "--project", "1", "--config", "GeoIP"],
  ];

  it.each([
    ["frontend", 'did you mean "pipeline_frontend_apps_configs"?'],
    ["plugin_config", 'did you mean "plugin_configs"?'],
    ["everything", ""],
  ])("%s gets one error, with a suggestion, on every command, before any request", async (value, hint) => {
    const expected = `pcsync: unknown family "${value}" for --family${hint === "" ? "" : `; ${hint}`}; use one of: plugin_configs, pipeline_frontend_apps_configs\n`;
    for (const command of commands) {
      // Nothing listens at this base URL: an attempt to connect would fail differently.
      const result = await run([...command, "--family", value], {
        PCSYNC_BASE_URL: "http://127.0.0.1:9",
        PCSYNC_API_KEY: KEY,
      });
      expect(result, command[0]).toEqual({ code: 1, stdout: "", stderr: expected });
    }
  });
});

describe("-o/--out", () => {
  it("plan -o and export -o/--out write the file; export --output still works, with a warning", async () => {
    const plan = await run(["plan", "-o", "plan.json"], withServer());
    expect(plan.code).toBe(0);
    expect(JSON.parse(await readFile(join(directory, "plan.json"), "utf8"))).toHaveProperty("summary");
    for (const flag of ["-o", "--out"]) {
      const exported = await run(["export", "--project", "2", flag, `export${flag}.yaml`], withServer());
      expect(exported).toMatchObject({ code: 0, stdout: "" });
      expect(exported.stderr).not.toContain("deprecated");
      expect(await readFile(join(directory, `export${flag}.yaml`), "utf8")).toContain("name: GeoIP");
    }
    const old = await run(["export", "--project", "2", "--output", "old.yaml"], withServer());
    expect(old.code).toBe(0);
    expect(old.stderr).toMatch(
      /^warning: --output is deprecated and will be removed in the next minor version; use -o\/--out\n/,
    );
    expect(await readFile(join(directory, "old.yaml"), "utf8")).toContain("name: GeoIP");
  });
});

describe("validate --format json", () => {
  it("prints every diagnostic as data on stdout, and exits 1 when invalid", async () => {
    const result = await run(["validate", "-f", "bad.yaml", "--format", "json"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("");
    const document = JSON.parse(result.stdout) as {
      valid: boolean;
      summary: Record<string, unknown>;
      diagnostics: Record<string, unknown>[];
    };
    expect(document).toMatchObject({
      version: 1,
      valid: false,
      files: ["bad.yaml"],
      summary: { projects: null, configs: null, errors: document.diagnostics.length, warnings: 0 },
    });
    expect(document.diagnostics.length).toBeGreaterThanOrEqual(2);
    expect(document.diagnostics).toContainEqual({
      file: "bad.yaml",
      line: 7,
      col: 11,
      severity: "error",
      message: expect.stringContaining('did you mean "plugin"?'),
    });
    for (const diagnostic of document.diagnostics) {
      expect(Object.keys(diagnostic).sort()).toEqual(["col", "file", "line", "message", "severity"]);
    }
  });

  it("says valid, with counts, for a valid manifest; text stays the default", async () => {
    const result = await run(["validate", "--format", "json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({
      version: 1,
      valid: true,
      files: ["pcsync.yaml"],
      summary: { projects: 1, configs: 1, errors: 0, warnings: 0 },
      resolvedAtPlanTime: [],
      diagnostics: [],
    });
    expect((await run(["validate"])).stdout).toBe("ok: 1 project, 1 config (1 file)\n");
  });
});

describe("validate --format json of a fleet", () => {
  it("names the project sets that say projects: all, which plan resolves", async () => {
    await writeFile(
      join(directory, "fleet.yaml"),
      'version: 1\ntemplates:\n  t:\n    plugin_configs:\n      configs:\n        - {name: GeoIP, plugin: 1}\nproject_sets:\n  - name: everyone\n    projects: all\n    use: [t]\nprojects:\n  "2":\n    plugin_configs:\n      configs:\n        - {name: Extra, plugin: 2}\n',
    );
    const result = await run(["validate", "-f", "fleet.yaml", "--format", "json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toMatchObject({
      valid: true,
      summary: { projects: 1, configs: 2 },
      resolvedAtPlanTime: [{ set: "everyone", file: "fleet.yaml", line: 8 }],
    });
  });
});

describe("where the base URL comes from", () => {
  it("--help names the manifest fallback only for the commands that have one", async () => {
    for (const command of ["export", "logs", "job", "frontend"]) {
      const help = (await run([command, "--help"])).stdout;
      expect(help, command).toMatch(/--base-url <url>\s+service base URL \(default: \$PCSYNC_BASE_URL\)/);
      expect(help, command).not.toContain("server.base_url");
    }
    const words = async (command: string) => (await run([command, "--help"])).stdout.replace(/\s+/g, " ");
    expect(await words("plan")).toContain("(default: $PCSYNC_BASE_URL, then the manifest's server.base_url)");
    expect(await words("apply")).toContain("with --plan, none: name the plan's server, it must match)");
  });

  it("says what to set when none is given, naming the manifest only where it is read", async () => {
    const exported = await run(["export", "--project", "1"], { PCSYNC_API_KEY: KEY });
    expect(exported.stderr).toBe("pcsync: no server given: pass --base-url URL or set PCSYNC_BASE_URL\n");
    const planned = await run(["plan"], { PCSYNC_API_KEY: KEY });
    expect(planned.stderr).toBe(
      "pcsync: no server given: pass --base-url URL, set PCSYNC_BASE_URL, or set server.base_url in the manifest\n",
    );
  });
});

describe("base URL mistakes", () => {
  it("a base URL ending in /api is corrected, with a warning, instead of 404s on /api/api/...", async () => {
    const result = await run(["plan", "--base-url", `${emulator.url}/api/`], { PCSYNC_API_KEY: KEY });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `warning: the base URL ${emulator.url}/api/ ends with /api, which pcsync adds to every request itself: using ${emulator.url}. If the service is really mounted under ${emulator.url}/api, write ${emulator.url}/api/api.\n`,
    );
    expect(result.stdout).toContain("No changes.");
  });

  it("refuses an endpoint's URL, and a URL without a scheme, saying what to write", async () => {
    const endpoint = await run(
      ["export", "--project", "1", "--base-url", `${emulator.url}/api/projects/1/`],
      {
        PCSYNC_API_KEY: KEY,
      },
    );
    expect(endpoint.stderr).toBe(
      `pcsync: Invalid base URL ${emulator.url}/api/projects/1/: it holds an API path; give the service's root URL, e.g. ${emulator.url} (pcsync adds /api/projects/... itself).\n`,
    );
    const bare = await run(["export", "--project", "1", "--base-url", "app.example.com"], {
      PCSYNC_API_KEY: KEY,
    });
    expect(bare.stderr).toBe(
      'pcsync: Invalid base URL "app.example.com": it has no scheme: write https://app.example.com.\n',
    );
    const local = await run(["export", "--project", "1", "--base-url", "localhost:8000"], {
      PCSYNC_API_KEY: KEY,
    });
    expect(local.stderr).toBe(
      'pcsync: Invalid base URL "localhost:8000": it has no scheme: write http://localhost:8000.\n',
    );
  });
});
