// End to end: `pcsync validate` as a user runs it, in-process; the alias bomb runs the built CLI
// (`npm run build` first), whose process a bound can kill should expanding it ever hang.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli } from "../support/cli.js";
import { runCliInProcess } from "../support/in-process.js";
import { REPOSITORY } from "../support/paths.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

describe("pcsync validate", () => {
  let work: WorkDir;
  let directory: string;
  beforeAll(async () => {
    work = await temporaryDirectory();
    directory = work.path;
    await writeFile(
      join(directory, "pcsync.yaml"),
      [
        "version: 1",
        "projects:",
        '  "${PROJECT_ID}":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          enabeld: true",
        "        - name: GeoIP",
        "          plugin: 2",
        "",
      ].join("\n"),
    );
    const lines = ["version: 1", "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"];
    for (let level = 1; level < 10; level++) {
      lines.push(
        `a${level}: &a${level} [${Array(9)
          .fill(`*a${level - 1}`)
          .join(", ")}]`,
      );
    }
    await writeFile(join(directory, "bomb.yaml"), lines.join("\n"));
  });
  afterAll(() => work.remove());

  it("validates the examples directory", async () => {
    const result = await runCliInProcess(["validate", "-f", "examples"], { env: {}, cwd: REPOSITORY });
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "ok: 3 projects, 12 configs (1 file)\n" });
  });

  it("reports every error of the file with its position, then exits 1", async () => {
    // PROJECT_ID is set, but only PCSYNC_VAR_PROJECT_ID is a variable: the message says so, without the value.
    const result = await runCliInProcess(["validate"], {
      cwd: directory,
      env: { GITHUB_ACTIONS: "true", PROJECT_ID: "424242" },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain("424242");
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      "pcsync.yaml:3:4: variable PROJECT_ID is not set: pcsync no longer reads the environment variable PROJECT_ID (a manifest could read any secret that way); set PCSYNC_VAR_PROJECT_ID or pass --var PROJECT_ID=VALUE",
      'pcsync.yaml:8:11: unknown key "enabeld"; did you mean "enabled"?',
      'pcsync.yaml:9:17: duplicate name "GeoIP" in plugin_configs of project "" (first at line 6, column 17); a name identifies one config, rename one of them',
      "::error file=pcsync.yaml,line=3,col=4::variable PROJECT_ID is not set: pcsync no longer reads the environment variable PROJECT_ID (a manifest could read any secret that way); set PCSYNC_VAR_PROJECT_ID or pass --var PROJECT_ID=VALUE",
      '::error file=pcsync.yaml,line=8,col=11::unknown key "enabeld"; did you mean "enabled"?',
      '::error file=pcsync.yaml,line=9,col=17::duplicate name "GeoIP" in plugin_configs of project "" (first at line 6, column 17); a name identifies one config, rename one of them',
      "pcsync: manifest invalid: 3 errors in 1 file",
      "",
    ]);
  });

  it("refuses an alias bomb with a message, not a crash", async () => {
    const result = await runBuiltCli(["validate", "-f", "bomb.yaml"], { cwd: directory, timeoutMs: 10_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^bomb\.yaml:\d+:\d+: aliases expand to more than 10000 values/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("says what to do when pcsync.yaml is missing", async () => {
    const result = await runCliInProcess(["validate", "-f", "missing.yaml"], { env: {}, cwd: directory });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "missing.yaml: no such file or directory; check the path given to -f\npcsync: manifest invalid: 1 error in 1 file\n",
    );
  });
});
