// Start-up time is mostly loading modules: a run imports only the command it runs, --version no
// command at all, validate neither the HTTP client nor a schema compiler, and plan (also of a saved
// plan) no schema compiler and only the parts of undici it uses. Each case fails as soon as an
// eager import comes back. (The times themselves are in bench/scenarios-startup.ts.)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_ACCESS, startTestEmulator } from "../support/emulator.js";
import { packagesOf, runRecordingImports } from "../support/imports.js";
import { runCliInProcess } from "../support/in-process.js";
import { EXAMPLES, REPOSITORY } from "../support/paths.js";

const VERSION = (JSON.parse(readFileSync(`${REPOSITORY}/package.json`, "utf8")) as { version: string })
  .version;

// What only plan, apply, export, logs, serve or the response checks need, or the unbundled yaml.
const NOT_AT_START_UP = ["undici", "diff", "yaml"];

/**
 * The files of ajv's schema compiler (and of ajv-formats' setup): the precompiled validators need
 * only ajv's run-time helpers (dist/runtime/) and the formats themselves (dist/formats.js).
 */
function schemaCompiler(imported: readonly string[]): string[] {
  return imported.filter((url) =>
    /\/node_modules\/(ajv\/dist\/(?!runtime\/)|ajv-formats\/dist\/(?!formats\.js$))/.test(url),
  );
}

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
    expect(schemaCompiler(run.imported)).toEqual([]);
    expect(commandModules(run.imported)).toEqual(["validate"]);
  });

  it("plan, and apply of the saved plan, use the precompiled validators: no schema compiler, no undici index", async () => {
    const { emulator } = await startTestEmulator();
    const directory = mkdtempSync(join(tmpdir(), "pcsync-startup-"));
    try {
      const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: ALL_ACCESS };
      const planFile = join(directory, "plan.json");
      const plan = await runRecordingImports(["plan", "-f", EXAMPLES, "-o", planFile], { env });
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/^Plan: 8 to create/m);
      const apply = await runRecordingImports(["apply", "--plan", planFile, "--dry-run"], { env });
      expect(apply.code, apply.stderr).toBe(0);
      const generated = (run: { imported: string[] }) =>
        run.imported.flatMap((url) => /\/dist\/src\/(.+\.generated)\.js$/.exec(url)?.[1] ?? []);
      expect(generated(plan)).toEqual(
        expect.arrayContaining(["api/validators.generated", "manifest/manifest-validator.generated"]),
      );
      // Only what reads a saved plan loads its validator.
      expect(generated(plan)).not.toContain("plan/plan-validator.generated");
      expect(generated(apply)).toContain("plan/plan-validator.generated");
      for (const run of [plan, apply]) {
        // The recorder saw the require()s of CommonJS packages: undici's pool is one.
        expect(run.imported.some((url) => url.endsWith("/node_modules/undici/lib/dispatcher/pool.js"))).toBe(
          true,
        );
        expect(schemaCompiler(run.imported)).toEqual([]);
        expect(run.imported.filter((url) => url.endsWith("/node_modules/undici/index.js"))).toEqual([]);
        expect(run.imported.filter((url) => /\/node_modules\/diff\/libesm\/index\.js$/.test(url))).toEqual(
          [],
        );
        expect(packagesOf(run.imported).filter((name) => ["prom-client", "yaml"].includes(name))).toEqual([]);
        expect(run.imported.filter((url) => /\/dist\/src\/(emulator|watch)\//.test(url))).toEqual([]);
      }
      expect(commandModules(plan.imported)).toEqual(["plan"]);
      expect(commandModules(apply.imported)).toEqual(["apply"]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
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
      expect(schemaCompiler(built.imported)).toEqual([]);
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
