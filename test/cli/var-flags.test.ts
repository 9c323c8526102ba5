// --var and --var-file on the commands that load a manifest, in-process against an emulator on
// port 0: precedence as documented, malformed flags refused without quoting them, apply --plan
// refusing them (it would ignore them), export -o matching an existing manifest's ${NAME} with
// them, demo passing them on without echoing values.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { runCliInProcess } from "../support/in-process.js";
import { KEY, reliabilityData } from "../support/scenario.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let remove: () => Promise<void>;
let emulator: RunningEmulator;

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const {
    code,
    stdout: out,
    stderr: err,
  } = await runCliInProcess(args, {
    env: { PCSYNC_API_KEY: KEY, PCSYNC_BASE_URL: emulator.url, ...env },
    cwd: directory,
  });
  return { code, stdout: out, stderr: err };
}

beforeAll(async () => {
  ({ path: directory, remove } = await temporaryDirectory());
  emulator = await startEmulator({ data: reliabilityData() });
  await writeFile(
    join(directory, "pcsync.yaml"),
    'version: 1\nprojects:\n  "${PROJECT:-1}":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugin: 1\n          description: "${A}/${B}/${C}"\n',
  );
  await writeFile(join(directory, "one.yaml"), "B: one\nC: one\n");
  await writeFile(join(directory, "two.yaml"), "C: two\n");
});

afterAll(async () => {
  await emulator.close();
  await remove();
});

/** The description the plan would set on GeoIP. */
function plannedDescription(json: string): unknown {
  const plan = JSON.parse(json) as { changes: { name: string; fields: Record<string, { to: unknown }> }[] };
  return plan.changes.find((change) => change.name === "GeoIP")?.fields.description?.to;
}

describe("--var and --var-file", () => {
  it("take PCSYNC_VAR_* < --var-file in order < --var, the last one winning", async () => {
    const env = { PCSYNC_VAR_A: "env", PCSYNC_VAR_B: "env", PCSYNC_VAR_C: "env" };
    const files = ["--var-file", "one.yaml", "--var-file", "two.yaml"];
    const plan = await run(["plan", "--format", "json", ...files], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plannedDescription(plan.stdout)).toBe("env/one/two");
    const overridden = await run(["plan", "--format", "json", ...files, "--var", "C=x", "--var", "C=y"], env);
    expect(plannedDescription(overridden.stdout)).toBe("env/one/y");
    const validate = await run(["validate", ...files, "--var", "A=a"]);
    expect(validate).toMatchObject({ code: 0, stdout: "ok: 1 project, 1 config (1 file)\n" });
  });

  it("refuse a malformed --var without quoting it", async () => {
    for (const argument of ["s3cr3t-token", "9=s3cr3t-token"]) {
      const result = await run(["validate", "--var", "A=1", "--var", argument]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^pcsync: --var \(the 2nd one\) expects NAME=VALUE/);
      expect(result.stderr).not.toContain("s3cr3t");
    }
  });

  it("refuse a missing var file with exit 1, naming it", async () => {
    emulator.resetRequestLog();
    const result = await run(["plan", "--var-file", "missing.yaml"]);
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[0]).toBe(
      "missing.yaml: no such file; check the path given to --var-file",
    );
    expect(emulator.requestLog).toEqual([]);
  });

  it("are refused beside apply --plan, which would ignore them", async () => {
    // Absolute: --out and --plan are read relative to the process, not to the in-process cwd.
    const planFile = join(directory, "plan.json");
    const saved = await run(["plan", "--out", planFile], {
      PCSYNC_VAR_A: "a",
      PCSYNC_VAR_B: "b",
      PCSYNC_VAR_C: "c",
    });
    expect(saved.code, saved.stderr).toBe(0);
    for (const flags of [
      ["--var", "A=1"],
      ["--var-file", "one.yaml"],
    ]) {
      const result = await run(["apply", "--plan", planFile, ...flags]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${flags[0]} cannot be combined with --plan`);
    }
  });

  it("--journal PATH and --no-journal together are refused, in either order, before anything is read", async () => {
    for (const flags of [
      ["--no-journal", "--journal", join(directory, "j.jsonl")],
      ["--journal", join(directory, "j.jsonl"), "--no-journal"],
    ]) {
      const result = await run(["apply", "--auto-approve", ...flags], {
        PCSYNC_VAR_A: "a",
        PCSYNC_VAR_B: "b",
        PCSYNC_VAR_C: "c",
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("--journal PATH and --no-journal cannot go together");
    }
  });

  it("let export -o update the block whose key interpolates to the project", async () => {
    const target = join(directory, "exported.yaml");
    await writeFile(
      target,
      'version: 1\nprojects:\n  "${P}":\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugin: ${PLUGIN}\n',
    );
    const result = await run(
      ["export", "--project", "1", "--family", "plugin_configs", "-o", target, "--var", "P=1"],
      {
        PCSYNC_VAR_PLUGIN: "1",
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const plan = await run(["plan", "-f", target, "--var", "P=1", "--detailed-exitcode"], {
      PCSYNC_VAR_PLUGIN: "1",
    });
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    const text = await readFile(target, "utf8");
    expect(text).toContain('  "${P}":\n');
    expect(text).toContain("plugin: ${PLUGIN}\n");
    expect(text).not.toContain('"1":');
  });

  it("end export before any request when a var file is missing", async () => {
    emulator.resetRequestLog();
    const result = await run(["export", "--project", "1", "--var-file", "missing.yaml"]);
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")[0]).toBe(
      "missing.yaml: no such file; check the path given to --var-file",
    );
    expect(emulator.requestLog).toEqual([]);
  });

  it("are listed by --help on every command that loads a manifest", async () => {
    for (const command of ["validate", "plan", "apply", "export", "demo"]) {
      const help = await run([command, "--help"]);
      expect(help.stdout, command).toContain("--var <NAME=VALUE>");
      expect(help.stdout, command).toContain("--var-file <file>");
    }
  });

  it("reach the demo's steps, whose echoed commands show names only", async () => {
    const result = await run(["demo", "-f", "pcsync.yaml", "--var-file", "one.yaml", "--var", "A=s3cr3t"], {
      PCSYNC_BASE_URL: undefined,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("$ pcsync plan -f pcsync.yaml --var-file one.yaml --var A=...\n");
    expect(result.stdout).toContain(
      "$ pcsync apply --auto-approve -f pcsync.yaml --var-file one.yaml --var A=...\n",
    );
    // The plan itself shows the value it sets: only the echoed command line hides it.
    expect(result.stdout).toContain("s3cr3t/one/one");
  });
});
