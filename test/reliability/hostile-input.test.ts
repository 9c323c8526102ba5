// Hostile input, end to end: project ids with `/`, `..`, `%2F`, spaces or unicode are refused or
// encoded as one path segment, never turned into another path (manifest keys and the --project flag
// of every command); names with control characters or over the length limits are refused with
// their position; odd but legal names go through apply, plan and export unchanged.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { type InProcessRun, runCliInProcess } from "../support/in-process.js";
import { KEY, reliabilityData } from "../support/scenario.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

/** Ids that would name another path if pasted into a URL as they are. */
const HOSTILE_IDS = ["1/../2", "..", "1%2F..%2F2", "1 2", "１", "2/"];

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function setUp(): Promise<{
  emulator: RunningEmulator;
  directory: string;
  run: (args: string[]) => Promise<InProcessRun>;
}> {
  const emulator = await startEmulator({ data: reliabilityData() });
  const directory = await temporaryDirectory();
  cleanup.push(directory.remove, () => emulator.close());
  const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY };
  return {
    emulator,
    directory: directory.path,
    run: (args) => runCliInProcess(args, { env, cwd: directory.path }),
  };
}

function expectRefusal(run: InProcessRun, context: string): void {
  expect(run.code, `${context}: ${run.stdout}${run.stderr}`).toBe(1);
  expect(run.stderr, context).toMatch(/^pcsync: /);
  expect(run.stderr, context).not.toMatch(/^\s+at |internal error/m);
}

describe("hostile project ids", () => {
  it("as manifest keys are refused with their position, before any request", async () => {
    const { emulator, directory } = await setUp();
    const keys = [...HOSTILE_IDS, "${HOSTILE_PROJECT}"];
    await writeManifest(
      directory,
      `version: 1\nprojects:\n${keys.map((key) => `  ${JSON.stringify(key)}:\n    plugin_configs:\n      configs: []\n`).join("")}`,
    );
    const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY, PCSYNC_VAR_HOSTILE_PROJECT: "../../1" };
    for (const command of ["validate", "plan", "apply"]) {
      const approve = command === "apply" ? ["--auto-approve"] : [];
      const result = await runCliInProcess([command, ...approve, "-f", "pcsync.yaml"], {
        env,
        cwd: directory,
      });
      expect(result.code, `${command}: ${result.stderr}`).toBe(1);
      keys.forEach((key, index) => {
        const shown = key.startsWith("$") ? "../../1" : key;
        // Key number n is on line 3n of the file, at column 3.
        expect(result.stderr, `${command} ${key}`).toContain(
          `pcsync.yaml:${3 + index * 3}:3: project id ${JSON.stringify(shown)} must be a decimal project id`,
        );
      });
      expect(result.stderr).not.toMatch(/^\s+at |internal error/m);
    }
    expect(emulator.requestLog).toEqual([]);
  });

  it("given to --project of export, logs, job and frontend are encoded as one segment or refused", async () => {
    const { emulator, run } = await setUp();
    const before = emulator.snapshot();
    // Every id through export; the other commands share its path building, so one id each suffices.
    const commands: Array<[string, string[], string[]]> = [
      ["export", [], HOSTILE_IDS],
      ["logs", ["--config", "GeoIP"], ["1/../2"]],
      ["job", ["--config", "GeoIP", "--job", "sync"], ["1%2F..%2F2"]],
      ["frontend", ["--config", "1", "--family", "pipeline_frontend_apps_configs"], [".."]],
    ];
    const runs = await Promise.all(
      commands.flatMap(([command, extra, ids]) =>
        ids.map(async (id) => ({ command, id, result: await run([command, "--project", id, ...extra]) })),
      ),
    );
    for (const { command, id, result } of runs)
      expectRefusal(result, `${command} --project ${JSON.stringify(id)}`);

    // Every request stayed under /api/projects/<the id, encoded as one segment>/.
    const allowed = new Set(HOSTILE_IDS.map((id) => `/api/projects/${encodeURIComponent(id)}/`));
    const strays = emulator.requestLog.filter(
      (entry) => ![...allowed].some((prefix) => entry.path.startsWith(prefix)),
    );
    expect(strays).toEqual([]);
    // ".." never leaves the client at all: a dot segment is refused, not encoded.
    expect(emulator.requestLog.filter((entry) => entry.path.startsWith("/api/projects/../"))).toEqual([]);
    expect(emulator.snapshot().records).toEqual(before.records);
  });

  it("given to --project of plan and apply are refused unless the manifest has them", async () => {
    const { emulator, directory, run } = await setUp();
    const manifest = await writeManifest(
      directory,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs: []\n',
    );
    for (const command of ["plan", "apply"]) {
      const approve = command === "apply" ? ["--auto-approve"] : [];
      const result = await run([command, ...approve, "-f", manifest, "--project", "1/../2"]);
      expectRefusal(result, command);
      expect(result.stderr).toContain("--project 1/../2: not in the manifest (it has 1)");
    }
    expect(emulator.requestLog).toEqual([]);
  });
});

describe("hostile names", () => {
  it("with control characters or past the length limits are refused with their position, before any request", async () => {
    const { emulator, directory, run } = await setUp();
    await writeManifest(
      directory,
      [
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        '        - name: "Geo\\u0007IP"',
        "          plugin: 1",
        '        - name: "two\\nlines"',
        "          plugin: 2",
        '        - name: "esc\\e[31mape"',
        "          plugin: 3",
        `        - name: ${"n".repeat(401)}`,
        "          plugin: 4",
        "        - name: Long description",
        "          plugin: 5",
        `          description: ${"d".repeat(1001)}`,
        "",
      ].join("\n"),
    );
    for (const command of ["validate", "apply"]) {
      const approve = command === "apply" ? ["--auto-approve"] : [];
      const result = await run([command, ...approve, "-f", "pcsync.yaml"]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        'pcsync.yaml:6:17: "name" contains a control character (U+0007 at character 4)',
      );
      expect(result.stderr).toContain(
        'pcsync.yaml:8:17: "name" contains a control character (U+000A at character 4)',
      );
      expect(result.stderr).toContain(
        'pcsync.yaml:10:17: "name" contains a control character (U+001B at character 4)',
      );
      expect(result.stderr).toContain(
        'pcsync.yaml:12:17: "name" is 401 characters long; the service accepts at most 400',
      );
      expect(result.stderr).toContain(
        'pcsync.yaml:16:24: "description" is 1001 characters long; the service accepts at most 1000',
      );
      // The escape sequence is shown as a code point, never written to the terminal.
      expect(result.stderr).not.toContain("\u001b");
    }
    expect(emulator.requestLog).toEqual([]);
  });

  it("that are odd but legal (slashes, dots, percent signs, unicode) round-trip through apply, plan and export", async () => {
    const { emulator, directory, run } = await setUp();
    const names = ["a/../b", "%2F..%2F", "Géo 🌍 ünïcödé", "名前", "?x=1&y=#z", "in  side"];
    const manifest = await writeManifest(
      directory,
      `version: 1\nprojects:\n  "3":\n    plugin_configs:\n      prune: true\n      configs:\n${names
        .map((name, index) => `        - name: ${JSON.stringify(name)}\n          plugin: ${index + 1}\n`)
        .join("")}`,
    );
    const applied = await run(["apply", "--auto-approve", "-f", manifest]);
    expect(applied.code, applied.stderr).toBe(0);
    const stored = emulator
      .snapshot()
      .records.filter((record) => record.project === 3 && !record.deleted)
      .map((record) => record.name);
    expect(stored.sort()).toEqual([...names].sort());
    expect((await run(["plan", "-f", manifest, "--detailed-exitcode"])).code).toBe(0);

    const exported = join(directory, "exported.yaml");
    const exportRun = await run(["export", "--project", "3", "--family", "plugin_configs", "-o", exported]);
    expect(exportRun.code, exportRun.stderr).toBe(0);
    for (const name of names)
      expect(await readFile(exported, "utf8")).toContain(JSON.stringify(name).slice(1, -1).trim());
    const replanned = await run(["plan", "-f", exported, "--detailed-exitcode"]);
    expect(replanned.code, replanned.stdout).toBe(0);
  });
});
