// Start-up time is mostly loading modules: a run imports only the command it runs, --version no
// command at all, and validate neither the HTTP client nor a schema compiler. Each case fails as
// soon as an eager import comes back. (The times themselves are in bench/scenarios-startup.ts.)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packagesOf, runRecordingImports } from "../support/imports.js";
import { runCliInProcess } from "../support/in-process.js";
import { EXAMPLES, REPOSITORY } from "../support/paths.js";

const VERSION = (JSON.parse(readFileSync(`${REPOSITORY}/package.json`, "utf8")) as { version: string })
  .version;

// What only plan, apply, export, logs, serve or the response checks need, or the unbundled yaml.
const NOT_AT_START_UP = ["undici", "ajv", "ajv-formats", "diff", "yaml"];

function commandModules(imported: readonly string[]): string[] {
  return imported.flatMap((url) => /\/dist\/src\/cli\/commands\/([^/]+)\.js$/.exec(url)?.[1] ?? []);
}

describe("what a run of the built CLI imports", () => {
  it.each(["--version", "-V"])("%s imports no command and no dependency but commander", async (flag) => {
    const run = await runRecordingImports([flag]);
    expect(run).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    // The recorder saw the run: the entry point and commander's own files.
    expect(run.imported.some((url) => url.endsWith("/dist/src/cli/main.js"))).toBe(true);
    expect(packagesOf(run.imported)).toEqual(["commander"]);
    expect(commandModules(run.imported)).toEqual([]);
    expect(
      run.imported.filter((url) => /\/dist\/src\/(manifest|api\/client|render|plan)\b/.test(url)),
    ).toEqual([]);
  });

  it("validate uses the precompiled manifest validator and the bundled yaml, and imports no other command", async () => {
    const run = await runRecordingImports(["validate", "-f", EXAMPLES]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ok: /);
    expect(
      run.imported.some((url) => url.endsWith("/dist/src/manifest/manifest-validator.generated.js")),
    ).toBe(true);
    expect(run.imported.some((url) => url.endsWith("/dist/src/vendor/yaml.js"))).toBe(true);
    expect(packagesOf(run.imported).filter((name) => NOT_AT_START_UP.includes(name))).toEqual([]);
    expect(commandModules(run.imported)).toEqual(["validate"]);
  });

  it("validate of an invalid manifest prints what the run-time compiled validator does, with its exit code", async () => {
    const directory = mkdtempSync(join(tmpdir(), "pcsync-startup-"));
    try {
      const file = join(directory, "bad.yaml");
      writeFileSync(
        file,
        'version: 2\nserver:\n  base_url: app.example.com\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugn: 1\n          enabled: "yes"\n',
      );
      const built = await runRecordingImports(["validate", "-f", "bad.yaml"], { cwd: directory });
      const fromSource = await runCliInProcess(["validate", "-f", "bad.yaml"], { env: {}, cwd: directory });
      expect(built.stderr).toContain('bad.yaml:9:11: unknown key "plugn"; did you mean "plugin"?');
      expect({ code: built.code, stdout: built.stdout, stderr: built.stderr }).toEqual(fromSource);
      expect(packagesOf(built.imported).filter((name) => NOT_AT_START_UP.includes(name))).toEqual([]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("help and a mistyped command import every command: they describe them all", async () => {
    for (const args of [["--help"], ["vaildate"]]) {
      const run = await runRecordingImports(args);
      expect(commandModules(run.imported)).toEqual(
        expect.arrayContaining(["validate", "plan", "apply", "export", "serve", "completion"]),
      );
    }
  });
});
