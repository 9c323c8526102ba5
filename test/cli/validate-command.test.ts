// `pcsync validate` in-process: what it prints, where, and its exit status.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GivenIo } from "../../src/cli/cli-io.js";
import { runCli } from "../../src/cli/program.js";
import { captureStreams } from "../support/capture.js";

// Through runCli, as the binary runs it: an invalid manifest's summary line and exit code come from
// the program's one error path.
async function runValidate(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const streams = captureStreams();
  const io: GivenIo = { stdout: streams.stdout, stderr: streams.stderr, env, cwd };
  const code = await runCli(["validate", ...args], io);
  return { code, ...streams.text() };
}

describe("pcsync validate", () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "pcsync-validate-"));
    await writeFile(
      join(directory, "pcsync.yaml"),
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - {name: A, plugin: 1}\n        - {name: B, plugin: 2}\n',
    );
    await writeFile(
      join(directory, "more.yaml"),
      'version: 1\nprojects:\n  "2":\n    pipeline_frontend_apps_configs:\n      configs:\n        - {name: C, plugin: 40}\n',
    );
    await writeFile(
      join(directory, "bad.yaml"),
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - name: A\n          plugn: 1\n',
    );
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("prints ok with counts for a valid manifest (pcsync.yaml by default)", async () => {
    expect(await runValidate([], directory)).toEqual({
      code: 0,
      stdout: "ok: 1 project, 2 configs (1 file)\n",
      stderr: "",
    });
  });

  it("prints every error as file:line:col on stderr and exits 1", async () => {
    const result = await runValidate(["-f", "bad.yaml"], directory);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      [
        'bad.yaml:6:11: missing required key "plugin" in config "A"; add `plugin: <id>` with the id of the plugin to run',
        'bad.yaml:7:11: unknown key "plugn"; did you mean "plugin"?',
        "pcsync: manifest invalid: 2 errors in 1 file",
        "",
      ].join("\n"),
    );
  });

  it("adds GitHub annotations when GITHUB_ACTIONS=true", async () => {
    const result = await runValidate(["--file", "bad.yaml"], directory, { GITHUB_ACTIONS: "true" });
    expect(result.stderr).toContain(
      '::error file=bad.yaml,line=7,col=11::unknown key "plugn"; did you mean "plugin"?\n',
    );
  });

  it("reads several -f paths into one desired state", async () => {
    const result = await runValidate(["-f", "pcsync.yaml", "-f", "more.yaml"], directory);
    expect(result).toEqual({ code: 0, stdout: "ok: 2 projects, 3 configs (2 files)\n", stderr: "" });
  });
});
