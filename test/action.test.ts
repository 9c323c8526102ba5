// Runs the GitHub Action (action.yml) as the runner would, against the emulator: its steps'
// scripts with bash, inputs through env, GITHUB_OUTPUT and the step summary; pcsync is the bundle
// the build made, as the action runs it at a ref: nothing is installed or built.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";
import { actionUnderTest } from "./support/action-under-test.js";
import { type JobResult, runJob, type UsesCall } from "./support/actions-runner.js";
import { REPOSITORY } from "./support/paths.js";

const READ_KEY = "phx_action_read_key_7c1e9b44d2";
const WRITE_KEY = "phx_action_write_key_0a5f3e81c6";

describe("action.yml", () => {
  const workdir = mkdtempSync(join(tmpdir(), "pcsync-action-"));
  const workspace = join(workdir, "repo");
  let emulator: RunningEmulator;
  const setupNodeCalls: Record<string, string>[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({
      // Busy plugins: a rollout's bake of a second sees enough entries to judge.
      logRate: 600,
      keys: [
        { key: READ_KEY, scopes: ["plugin:read"], projects: "*" },
        { key: WRITE_KEY, scopes: ["*"], projects: "*" },
      ],
    });
    mkdirSync(join(workspace, "config"), { recursive: true });
    writeFileSync(
      join(workspace, "config", "pcsync.yaml"),
      readFileSync(join(REPOSITORY, "examples", "pcsync.yaml"), "utf8").replace(
        "../schemas",
        "../../schemas",
      ),
    );
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(workdir, { recursive: true, force: true });
  });

  /** One job with one step that uses the action with these inputs and this env. */
  async function useAction(
    inputs: Record<string, string>,
    env: Record<string, string> = {},
  ): Promise<JobResult> {
    return runJob(
      {
        on: "push",
        permissions: {},
        jobs: { test: { steps: [{ id: "pcsync", uses: "./", with: inputs, env }] } },
      },
      "test",
      {
        workspace,
        github: { event_name: "push", repository: "acme/plugin-configs", token: "fake-token" },
        baseEnv: { PATH: process.env.PATH ?? "", HOME: workdir, NO_COLOR: "1" },
        compositeActions: { "./": actionUnderTest() },
        actions: {
          "actions/setup-node": async (call: UsesCall) => {
            setupNodeCalls.push(call.with);
            return {};
          },
        },
      },
    );
  }

  const outputsOf = (result: JobResult): Record<string, string> => result.steps.pcsync?.outputs ?? {};
  const server = (key: string) => ({ PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: key });
  const everything = (result: JobResult): string => {
    const outputs = outputsOf(result);
    const files = [outputs["plan-file"], outputs["markdown-file"]].filter(
      (file): file is string => file !== undefined && file !== "" && existsSync(file),
    );
    return [
      result.log,
      result.summary,
      JSON.stringify(outputs),
      ...files.map((file) => readFileSync(file, "utf8")),
    ].join("\n");
  };

  it("plans with changes, applies that plan, and plans again to no changes", async () => {
    const planned = await useAction({ manifests: "config/pcsync.yaml" }, server(READ_KEY));
    expect(planned.result, planned.log).toBe("success");
    const outputs = outputsOf(planned);
    expect(outputs).toMatchObject({ "exit-code": "2", "has-changes": "true" });
    const planFile = outputs["plan-file"] ?? "";
    expect(planFile.startsWith("/")).toBe(true);
    expect(JSON.parse(readFileSync(planFile, "utf8"))).toMatchObject({ format: "pcsync-plan" });
    const markdown = readFileSync(outputs["markdown-file"] ?? "", "utf8");
    expect(markdown).toContain("<!-- pcsync-plan -->");
    expect(markdown).toContain("to create");
    expect(planned.summary).toContain("<!-- pcsync-plan -->");
    // The log shows the text plan, as a terminal would; the markdown goes to the summary, once.
    expect(planned.log).toMatch(/^Plan: \d+ to create/m);
    expect(planned.log).not.toContain("<!-- pcsync-plan -->");
    expect(planned.summary?.split("<!-- pcsync-plan -->")).toHaveLength(2);
    expect(planned.log).toContain("::notice title=pcsync::pcsync plan: changes are pending");
    expect(setupNodeCalls.at(-1)).toEqual({ "node-version": "24" });
    expect(everything(planned)).not.toContain(READ_KEY);

    const applied = await useAction({ command: "apply", "plan-file": planFile }, server(WRITE_KEY));
    expect(applied.result, applied.log).toBe("success");
    expect(outputsOf(applied)).toMatchObject({
      "exit-code": "0",
      "has-changes": "true",
      "plan-file": planFile,
    });
    const report = readFileSync(outputsOf(applied)["markdown-file"] ?? "", "utf8");
    expect(report).toContain("<!-- pcsync-plan -->");
    expect(report).toMatch(/#### What the apply did\n\n```text\n[^`]*Apply complete: \d+ created/);
    expect(applied.summary).toBe(report);
    expect(applied.log).toContain("Apply complete:");
    expect(everything(applied)).not.toContain(WRITE_KEY);

    // A drift check: no changes is a success, and so it stays with fail-on-changes.
    const clean = await useAction(
      { manifests: "config/pcsync.yaml", "fail-on-changes": "true" },
      server(READ_KEY),
    );
    expect(clean.result, clean.log).toBe("success");
    expect(outputsOf(clean)).toMatchObject({ "exit-code": "0", "has-changes": "false" });
  });

  it("fails the step on pending changes only with fail-on-changes, and keeps the outputs", async () => {
    writeFileSync(
      join(workspace, "drift.yaml"),
      "version: 1\nprojects:\n  '1':\n    plugin_configs:\n      configs:\n        - name: GeoIP\n          plugin: 1\n          description: changed by this test\n",
    );
    // Extra arguments split on any whitespace, newlines included.
    const inputs = { manifests: "drift.yaml", args: "  --project\n 1   --max-rps 50 " };
    const lenient = await useAction(inputs, server(READ_KEY));
    expect(lenient.result, lenient.log).toBe("success");
    expect(outputsOf(lenient)).toMatchObject({ "exit-code": "2", "has-changes": "true" });

    const strict = await useAction({ ...inputs, "fail-on-changes": "true" }, server(READ_KEY));
    expect(strict.result).toBe("failure");
    expect(outputsOf(strict)).toMatchObject({ "exit-code": "2", "has-changes": "true" });
    expect(existsSync(outputsOf(strict)["plan-file"] ?? "")).toBe(true);
    expect(strict.log).toContain("::error title=pcsync::pcsync plan: changes are pending (exit code 2)");
  });

  it("applies a fresh plan only with auto-approve: true; without it, refuses and changes nothing", async () => {
    writeFileSync(
      join(workspace, "fresh.yaml"),
      "version: 1\nprojects:\n  '3':\n    plugin_configs:\n      configs:\n        - name: Fresh from CI\n          plugin: 2\n",
    );
    const namesIn3 = async () => {
      const response = await fetch(`${emulator.url}/api/projects/3/plugin_configs/`, {
        headers: { authorization: `Bearer ${WRITE_KEY}` },
      });
      return ((await response.json()) as { results: { name: string }[] }).results.map(
        (record) => record.name,
      );
    };
    const refused = await useAction({ command: "apply", manifests: "fresh.yaml" }, server(WRITE_KEY));
    expect(refused.result).toBe("failure");
    expect(outputsOf(refused)["exit-code"]).toBe("1");
    expect(refused.log).toContain("add --auto-approve");
    expect(await namesIn3()).not.toContain("Fresh from CI");

    const odd = await useAction({ command: "apply", manifests: "fresh.yaml", "auto-approve": "yes" });
    expect(odd.log).toContain('::error title=pcsync::auto-approve must be true or false, not "yes"');

    const approved = await useAction(
      { command: "apply", manifests: "fresh.yaml", "auto-approve": "true" },
      server(WRITE_KEY),
    );
    expect(approved.result, approved.log).toBe("success");
    expect(await namesIn3()).toContain("Fresh from CI");
  });

  it("reports an error as exit code 1, with no plan file to upload or apply", async () => {
    writeFileSync(
      join(workspace, "broken.yaml"),
      "version: 1\nprojects:\n  '1':\n    plugin_configs:\n      configs:\n        - name: X\n          enabeld: true\n",
    );
    const stale = join(workspace, "old-plan.json");
    writeFileSync(stale, "{}");
    const result = await useAction(
      { manifests: "broken.yaml", "plan-file": "old-plan.json", "node-version": "" },
      server(READ_KEY),
    );
    expect(result.result).toBe("failure");
    expect(outputsOf(result)).toMatchObject({ "exit-code": "1", "has-changes": "", "plan-file": "" });
    expect(existsSync(stale)).toBe(false);
    expect(result.log).toMatch(/::error file=broken\.yaml,line=7,col=11::/);
    expect(result.log).toContain("::error title=pcsync::pcsync plan failed (exit code 1)");
  });

  it("a rollout halted by its health check fails the step with exit code 4, said as such", async () => {
    const manifest = [
      "version: 1",
      "rollout:",
      "  waves:",
      "    - name: canary",
      '      projects: ["3"]',
      "    - name: rest",
      "      percent: 100",
      "  bake: 1s",
      "  health:",
      "    logs:",
      "      min_entries: 2",
      "projects:",
      '  "3":',
      "    plugin_configs:",
      "      configs:",
      "        - { name: Halting Canary, plugin: 1, enabled: true, description: BROKEN build }",
      "",
    ].join("\n");
    writeFileSync(join(workspace, "rollout.yaml"), manifest);
    emulator.setFaults({ logErrors: [{ description: "BROKEN", ratio: 1 }] });
    let result: JobResult;
    try {
      result = await useAction(
        { command: "apply", manifests: "rollout.yaml", "auto-approve": "true" },
        server(WRITE_KEY),
      );
    } finally {
      emulator.setFaults({});
    }
    expect(result.result, result.log).toBe("failure");
    expect(outputsOf(result)).toMatchObject({ "exit-code": "4" });
    expect(result.log).toContain(
      "::error title=pcsync::pcsync apply: the rollout halted on a failed health check (exit code 4)",
    );
    expect(result.log).toContain('Rollout halted in wave "canary"');
    // Rolled back: the canary's record is gone again.
    const left = emulator
      .snapshot()
      .records.filter((record) => record.name === "Halting Canary" && !record.deleted);
    expect(left).toEqual([]);
  }, 60_000);

  it("validates offline, with annotations", async () => {
    const good = await useAction({ command: "validate", manifests: "config/pcsync.yaml" });
    expect(good.result, good.log).toBe("success");
    expect(outputsOf(good)).toMatchObject({ "exit-code": "0", "plan-file": "", "markdown-file": "" });
    const bad = await useAction({ command: "validate", manifests: "broken.yaml\nconfig/pcsync.yaml" });
    expect(bad.result).toBe("failure");
    expect(outputsOf(bad)["exit-code"]).toBe("1");
  });

  it("hands every input to pcsync as text, never to the shell", async () => {
    const dir = join(workspace, "odd dir; $(touch pwned-dir)");
    mkdirSync(dir);
    writeFileSync(join(dir, "a b.yaml"), readFileSync(join(workspace, "config", "pcsync.yaml"), "utf8"));
    const result = await useAction(
      {
        command: "validate",
        "working-directory": "odd dir; $(touch pwned-dir)",
        manifests: "  a b.yaml  \n\n$(touch pwned-manifest)\n`touch pwned-tick`",
        args: "-f * --var-file $(touch${IFS}pwned-args)",
      },
      server(READ_KEY),
    );
    expect(result.result).toBe("failure");
    // pcsync got the text, and looked for files of these very names (the spaced name was found).
    expect(result.log).toContain("$(touch pwned-manifest): no such file");
    expect(result.log).toContain("`touch pwned-tick`: no such file");
    expect(result.log).toContain("*: no such file");
    expect(result.log).toContain("$(touch${IFS}pwned-args): no such file");
    expect(result.log).not.toContain("a b.yaml");
    for (const base of [workspace, dir]) {
      for (const name of ["pwned-dir", "pwned-manifest", "pwned-tick", "pwned-args"]) {
        expect(existsSync(join(base, name)), name).toBe(false);
      }
    }
  });

  it("refuses an unknown command and input that would forge outputs, before running anything", async () => {
    const unknown = await useAction({ command: "serve" });
    expect(unknown.result).toBe("failure");
    expect(unknown.log).toContain(
      '::error title=pcsync::command must be validate, plan, apply or rollback, not "serve"',
    );
    expect(outputsOf(unknown)["exit-code"]).toBe("");
    const nowhere = await useAction({ "working-directory": "no/such/dir" });
    expect(nowhere.log).toContain("::error title=pcsync::working-directory no/such/dir: no such directory");

    const forged = await useAction(
      { "plan-file": "plan.json\nhas-changes=false\n::add-mask::x" },
      server(READ_KEY),
    );
    expect(forged.result).toBe("failure");
    expect(forged.log).toContain("::error title=pcsync::plan-file must not contain a line break");
    expect(outputsOf(forged)["has-changes"]).toBe("");
    expect(forged.log).not.toMatch(/^::add-mask::/m);
  });
});
