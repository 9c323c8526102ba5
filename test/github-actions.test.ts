// Runs the example GitHub Actions workflow's shell steps, as the runner would, against the
// emulator: the sticky plan comment (with a stand-in for the `gh` CLI), apply on merge with a
// saved plan, and the nightly drift check failing on exit code 2.

import { spawn } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";
import { CLI_PATH } from "./support/cli.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WORKFLOW = join(ROOT, "examples", "github-actions", "pcsync.yml");
const KEY = "phx_actions_test_key_3f9a2c";
const MARKER = "<!-- pcsync-plan -->";

interface Step {
  name?: string;
  run?: string;
  env?: Record<string, string>;
}
interface Workflow {
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
}

// A stand-in for `gh api`: comments of one pull request in a JSON file, and the three calls the
// workflow makes (list with the marker filter, create, update).
const FAKE_GH = `
import { readFileSync, writeFileSync, existsSync } from "node:fs";
const state = process.env.FAKE_GH_STATE;
const comments = existsSync(state) ? JSON.parse(readFileSync(state, "utf8")) : [];
const args = process.argv.slice(2);
const method = args.includes("--method") ? args[args.indexOf("--method") + 1] : "GET";
const bodyArg = args.find((arg) => arg.startsWith("body=@"));
const body = bodyArg ? readFileSync(bodyArg.slice("body=@".length), "utf8") : undefined;
if (method === "GET") {
  for (const comment of comments) if (comment.body.startsWith("${MARKER}")) console.log(comment.id);
} else if (method === "POST") {
  comments.push({ id: 1000 + comments.length, body });
} else if (method === "PATCH") {
  const id = Number(args.find((arg) => arg.includes("/issues/comments/")).split("/").pop());
  comments.find((comment) => comment.id === id).body = body;
}
writeFileSync(state, JSON.stringify(comments));
`;

describe("examples/github-actions/pcsync.yml", () => {
  const workdir = mkdtempSync(join(tmpdir(), "pcsync-actions-"));
  const workflow = parse(readFileSync(WORKFLOW, "utf8")) as Workflow;
  let emulator: RunningEmulator;

  beforeAll(async () => {
    emulator = await startEmulator({ keys: [{ key: KEY, scopes: ["*"], projects: "*" }] });
    cpSync(join(ROOT, "examples", "pcsync.yaml"), join(workdir, "pcsync.yaml"));
    const bin = join(workdir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "pcsync"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
    writeFileSync(join(workdir, "fake-gh.mjs"), FAKE_GH);
    writeFileSync(
      join(bin, "gh"),
      `#!/bin/sh\nexec "${process.execPath}" "${join(workdir, "fake-gh.mjs")}" "$@"\n`,
    );
    chmodSync(join(bin, "pcsync"), 0o755);
    chmodSync(join(bin, "gh"), 0o755);
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(workdir, { recursive: true, force: true });
  });

  /** Substitutes the `${{ ... }}` expressions the workflow uses with this test's values. */
  function expand(value: string): string {
    const values: Record<string, string> = {
      "vars.PCSYNC_BASE_URL": emulator.url,
      "secrets.PCSYNC_API_KEY": KEY,
      "github.token": "fake-token",
      "github.event.number": "7",
    };
    return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expression: string) => values[expression] ?? "");
  }

  /** Runs a job's `run:` steps in order, like the runner (bash -e -o pipefail); returns the first failure. */
  // Asynchronous on purpose: the emulator answers from this process's event loop.
  function runStep(
    script: string,
    env: NodeJS.ProcessEnv,
  ): Promise<{ status: number | null; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
        cwd: workdir,
        env,
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.on("error", reject);
      child.on("close", (status) => resolve({ status, output }));
    });
  }

  async function runJob(job: string): Promise<{ status: number; step?: string; output: string }> {
    const summary = join(workdir, `summary-${job}.md`);
    let output = "";
    for (const step of workflow.jobs[job]?.steps ?? []) {
      if (step.run === undefined || step.run.startsWith("npm install --global")) continue;
      const env: NodeJS.ProcessEnv = {
        PATH: `${join(workdir, "bin")}:${process.env.PATH ?? ""}`,
        HOME: workdir,
        GITHUB_ACTIONS: "true",
        GITHUB_STEP_SUMMARY: summary,
        GITHUB_REPOSITORY: "acme/plugin-configs",
        FAKE_GH_STATE: join(workdir, "comments.json"),
      };
      for (const [name, value] of Object.entries({ ...workflow.env, ...step.env })) env[name] = expand(value);
      const result = await runStep(step.run, env);
      output += result.output;
      if (result.status !== 0) return { status: result.status ?? -1, step: step.name ?? step.run, output };
    }
    return { status: 0, output };
  }

  const comments = (): { id: number; body: string }[] =>
    JSON.parse(readFileSync(join(workdir, "comments.json"), "utf8")) as { id: number; body: string }[];

  it("plans a pull request into one sticky comment, updated rather than duplicated", async () => {
    expect(await runJob("plan")).toMatchObject({ status: 0 });
    expect(comments()).toHaveLength(1);
    expect(comments()[0]?.body).toContain(MARKER);
    expect(comments()[0]?.body).toContain("to create");
    expect(readFileSync(join(workdir, "summary-plan.md"), "utf8")).toContain(MARKER);

    writeFileSync(
      join(workdir, "pcsync.yaml"),
      readFileSync(join(workdir, "pcsync.yaml"), "utf8").replace(
        "Renames events to snake_case",
        "Renames events",
      ),
    );
    expect(await runJob("plan")).toMatchObject({ status: 0 });
    expect(comments()).toHaveLength(1);
    expect(comments()[0]?.body).toContain("Renames events");
  });

  it("applies the saved plan on merge, then the nightly drift check passes", async () => {
    expect(await runJob("apply")).toMatchObject({ status: 0 });
    expect(readFileSync(join(workdir, "plan.json"), "utf8")).not.toContain(KEY);
    expect(await runJob("drift")).toMatchObject({ status: 0 });
  });

  it("fails the nightly drift check with exit code 2 when someone changed a record by hand", async () => {
    const response = await fetch(`${emulator.url}/api/projects/1/plugin_configs/1/`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    expect(response.status).toBe(200);
    const result = await runJob("drift");
    expect(result).toMatchObject({ status: 2, step: "Drift check" });
    expect(result.output).toContain("enabled: false → true");
  });
});
