// The example workflows (examples/github-actions/) and the action (action.yml): valid for GitHub
// by a real validator, written safely (values reach scripts only through env, the write key only
// in the protected environment), and run end to end as the runner would, against the emulator
// and an in-memory GitHub: plan comments, apply of the reviewed plan on merge, the drift issue.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateAction, validateWorkflow } from "@action-validator/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";
import { actionUnderTest } from "./support/action-under-test.js";
import {
  type ExpressionObject,
  type JobResult,
  loadYaml,
  type RunnerSetup,
  runWorkflow,
  type Step,
  type Workflow,
} from "./support/actions-runner.js";
import { BOT, FakeGitHub, type PullRequest } from "./support/fake-github.js";
import { runCliInProcess } from "./support/in-process.js";
import { REPOSITORY } from "./support/paths.js";

const EXAMPLES = join(REPOSITORY, "examples", "github-actions");
const WORKFLOW_FILES = readdirSync(EXAMPLES).filter((file) => file.endsWith(".yml"));
const READ_KEY = "phx_workflows_read_key_5d0c7a13e9";
const WRITE_KEY = "phx_workflows_write_key_b82f61c4a7";
const PLAN_PATH = ".github/workflows/pcsync-plan.yml";
const COMMENT_MARKER = "<!-- pcsync-plan-comment -->";
const ISSUE_MARKER = "<!-- pcsync-drift-issue -->";

const PROJECT_WORKFLOWS = readdirSync(join(REPOSITORY, ".github", "workflows")).filter((file) =>
  file.endsWith(".yml"),
);
const workflow = (file: string): Workflow => loadYaml<Workflow>(join(EXAMPLES, file));

/** Every step of a workflow or of the action, with where it is. */
function stepsOf(file: string): { where: string; step: Step }[] {
  if (file === "action.yml") {
    const action = loadYaml<{ runs: { steps: Step[] } }>(join(REPOSITORY, "action.yml"));
    return action.runs.steps.map((step, index) => ({ where: `action.yml step ${index + 1}`, step }));
  }
  return Object.entries(workflow(file).jobs).flatMap(([jobId, job]) =>
    job.steps.map((step, index) => ({ where: `${file} job ${jobId} step ${index + 1}`, step })),
  );
}

describe("the action and the example workflows, statically", () => {
  // The validator prints a warning for each `paths:` glob it does not check; keep the log clean.
  const quietly = <T>(validate: () => T): T => {
    const warn = console.warn;
    const log = console.log;
    console.warn = () => undefined;
    console.log = () => undefined;
    try {
      return validate();
    } finally {
      console.warn = warn;
      console.log = log;
    }
  };

  it("are valid for GitHub (action-validator), and a broken copy is not", () => {
    expect(WORKFLOW_FILES.sort()).toEqual([
      "pcsync-apply.yml",
      "pcsync-drift-sharded.yml",
      "pcsync-drift.yml",
      "pcsync-plan.yml",
      "pcsync-rollback.yml",
      "pcsync-rollout.yml",
    ]);
    const action = readFileSync(join(REPOSITORY, "action.yml"), "utf8");
    expect(quietly(() => validateAction(action)).errors).toEqual([]);
    for (const file of WORKFLOW_FILES) {
      const text = readFileSync(join(EXAMPLES, file), "utf8");
      expect(quietly(() => validateWorkflow(text)).errors, file).toEqual([]);
    }
    for (const file of PROJECT_WORKFLOWS) {
      const text = readFileSync(join(REPOSITORY, ".github", "workflows", file), "utf8");
      expect(quietly(() => validateWorkflow(text)).errors, file).toEqual([]);
    }
    // The validator does look: a composite step without its shell, a misspelt key.
    expect(quietly(() => validateAction(action.replace(/\n\s+shell: bash/, ""))).errors).not.toEqual([]);
    const plan = readFileSync(join(EXAMPLES, "pcsync-plan.yml"), "utf8");
    expect(quietly(() => validateWorkflow(plan.replace("runs-on:", "runs_on:"))).errors).not.toEqual([]);
  });

  it("hand values to scripts only through env, and install pcsync only through the action", () => {
    for (const file of ["action.yml", ...WORKFLOW_FILES]) {
      const text = readFileSync(
        file === "action.yml" ? join(REPOSITORY, file) : join(EXAMPLES, file),
        "utf8",
      );
      expect(text, file).not.toMatch(/npm (install|i|ci)\b[^\n]*pcsync@/);
      for (const { where, step } of stepsOf(file)) {
        // An expression spliced into a script runs whatever text it holds (a branch name, a
        // title, an input): scripts read such values from env.
        expect(step.run ?? "", where).not.toContain("${{");
        expect(String(step.with?.script ?? ""), where).not.toContain("${{");
        if (step.uses?.includes("pcsync")) expect(step.uses, where).toBe("OWNER/pcsync@v0");
      }
    }
  });

  it("pin every third-party action to a full commit SHA, with its version in a comment", () => {
    const files = [
      join(REPOSITORY, "action.yml"),
      ...WORKFLOW_FILES.map((file) => join(EXAMPLES, file)),
      ...PROJECT_WORKFLOWS.map((file) => join(REPOSITORY, ".github", "workflows", file)),
    ];
    let pinned = 0;
    for (const path of files) {
      for (const line of readFileSync(path, "utf8").split("\n")) {
        const uses = /^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/.exec(line);
        if (uses === null) continue;
        const [, target = "", rest = ""] = uses;
        // Local actions and pcsync itself (a placeholder for the user's copy) are not third-party.
        if (target.startsWith("./") || target.startsWith("OWNER/pcsync@")) continue;
        expect(target, `${path}: ${line.trim()}`).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/);
        expect(rest, `${path}: ${line.trim()}`).toMatch(/^ # v\d+\.\d+\.\d+$/);
        pinned += 1;
      }
    }
    expect(pinned).toBeGreaterThan(10);
    // One version per action everywhere, so that Dependabot's updates stay in step.
    const versions = new Map<string, Set<string>>();
    for (const path of files) {
      for (const match of readFileSync(path, "utf8").matchAll(/uses:\s*([\w.-]+\/[\w.-]+)@([0-9a-f]{40})/g)) {
        const seen = versions.get(match[1] ?? "") ?? new Set<string>();
        seen.add(match[2] ?? "");
        versions.set(match[1] ?? "", seen);
      }
    }
    for (const [action, shas] of versions) expect([...shas], action).toHaveLength(1);
    const dependabot = loadYaml<{ updates: { "package-ecosystem": string }[] }>(
      join(REPOSITORY, ".github", "dependabot.yml"),
    );
    expect(dependabot.updates.map((update) => update["package-ecosystem"]).sort()).toEqual([
      "github-actions",
      "npm",
    ]);
  });

  it("the action builds nothing: it runs the committed bundle, with no npm", () => {
    const text = readFileSync(join(REPOSITORY, "action.yml"), "utf8");
    for (const { where, step } of stepsOf("action.yml")) {
      expect(step.run ?? "", where).not.toMatch(/\bnpm (ci|install|i|run)\b|\bnpx\b|\btsc\b/);
    }
    expect(text).toContain('cli="$GITHUB_ACTION_PATH/action-dist/pcsync.mjs"');
    expect(existsSync(join(REPOSITORY, "action-dist", "pcsync.mjs"))).toBe(true);
    expect(readFileSync(join(REPOSITORY, "action-dist", "NOTICES.md"), "utf8")).toMatch(
      /## undici [\s\S]*## yaml /,
    );
    // CI tests every supported Node.js, and checks the bundle against the source.
    const ci = loadYaml<{ jobs: Record<string, { strategy?: { matrix?: { node?: string[] } } }> }>(
      join(REPOSITORY, ".github", "workflows", "ci.yml"),
    );
    expect(ci.jobs.test?.strategy?.matrix?.node).toEqual(["20", "22", "24"]);
    expect(JSON.stringify(ci.jobs["check-dist"])).toContain("npm run bundle");
  });

  it("hold the write key only in jobs bound to the production environment", () => {
    for (const file of WORKFLOW_FILES) {
      const parsed = workflow(file);
      expect(JSON.stringify(parsed.env ?? {}), `${file}: workflow-wide env`).not.toContain("secrets.");
      for (const [jobId, job] of Object.entries(parsed.jobs)) {
        const uses = JSON.stringify(job);
        if (uses.includes("secrets.PCSYNC_API_KEY")) {
          expect(job.environment, `${file} job ${jobId}`).toBe("production");
          expect(JSON.stringify(job.env ?? {}), `${file} job ${jobId}: job-wide env`).not.toContain(
            "secrets.",
          );
        }
        expect(
          job.permissions ?? parsed.permissions,
          `${file} job ${jobId}: token permissions`,
        ).toBeDefined();
      }
    }
  });

  it("run on changes to every file their commands read", () => {
    for (const [file, event] of [
      ["pcsync-plan.yml", "pull_request"],
      ["pcsync-apply.yml", "push"],
    ] as const) {
      const parsed = workflow(file);
      const paths = (parsed.on as Record<string, { paths?: string[] }>)[event]?.paths ?? [];
      const read = stepsOf(file).flatMap(({ step }) => {
        if (!step.uses?.includes("pcsync") || step.with?.["plan-file"] !== undefined) return [];
        const manifests = String(step.with?.manifests ?? "pcsync.yaml").split("\n");
        const varFiles = [...String(step.with?.args ?? "").matchAll(/--var-file\s+(\S+)/g)].map(
          (match) => match[1],
        );
        return [...manifests, ...varFiles].filter(Boolean);
      });
      expect(read.length, file).toBeGreaterThan(0);
      for (const path of read) expect(paths, `${file}: ${path}`).toContain(path);
    }
    const planPaths = (workflow("pcsync-plan.yml").on as Record<string, { paths: string[] }>).pull_request
      ?.paths;
    expect(planPaths).toContain(PLAN_PATH);
  });
});

describe("the example workflows, run against the emulator", () => {
  const workdir = mkdtempSync(join(tmpdir(), "pcsync-workflows-"));
  const workspace = join(workdir, "repo");
  const github = new FakeGitHub();
  const example = readFileSync(join(REPOSITORY, "examples", "pcsync.yaml"), "utf8");
  let emulator: RunningEmulator;
  let mainManifest = example;

  beforeAll(async () => {
    emulator = await startEmulator({
      keys: [
        { key: READ_KEY, scopes: ["plugin:read"], projects: "*" },
        { key: WRITE_KEY, scopes: ["*"], projects: "*" },
      ],
    });
    mkdirSync(workspace);
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(workdir, { recursive: true, force: true });
  });

  /** The runner for one run: the checkout holds `manifest`; secrets as GitHub would give them. */
  function setup(githubContext: ExpressionObject, manifest: string, fromFork = false): RunnerSetup {
    writeFileSync(join(workspace, "pcsync.yaml"), manifest);
    return {
      workspace,
      github: {
        repository: github.fullName,
        token: "ghs_job_token",
        server_url: "https://github.com",
        ...githubContext,
      },
      vars: { PCSYNC_BASE_URL: emulator.url },
      // Forks' pull requests get no secrets.
      secrets: fromFork ? {} : { PCSYNC_READ_API_KEY: READ_KEY },
      environmentSecrets: { production: { PCSYNC_API_KEY: WRITE_KEY } },
      baseEnv: { PATH: process.env.PATH ?? "", HOME: workdir, NO_COLOR: "1" },
      compositeActions: { "OWNER/pcsync": actionUnderTest() },
      actions: {
        "actions/checkout": async () => ({}),
        "actions/setup-node": async () => ({}),
        ...github.handlers(),
      },
    };
  }

  async function planPullRequest(pull: PullRequest, manifest: string) {
    const fromFork = pull.head.repo.full_name !== github.fullName;
    const run = github.startRun("pull_request", PLAN_PATH, pull.head.sha, pull.head.repo.id);
    const context = {
      event_name: "pull_request",
      event: {
        pull_request: { number: pull.number, head: { sha: pull.head.sha, repo: pull.head.repo } },
        repository: { id: github.repository.id },
      },
      sha: `merge-of-${pull.head.sha}`,
      ref: `refs/pull/${pull.number}/merge`,
      run_id: run.id,
    };
    return (await runWorkflow(workflow("pcsync-plan.yml"), setup(context, manifest, fromFork)))
      .plan as JobResult;
  }

  async function runOnMain(file: string, event: string, sha: string) {
    const run = github.startRun(event, `.github/workflows/${file}`, sha);
    const context = {
      event_name: event,
      event: { repository: { id: github.repository.id } },
      sha,
      ref: "refs/heads/main",
      run_id: run.id,
    };
    return runWorkflow(workflow(file), setup(context, mainManifest));
  }

  async function mergePullRequest(pull: PullRequest, manifest: string, mergeSha: string) {
    github.merge(pull, mergeSha);
    mainManifest = manifest;
    return runOnMain("pcsync-apply.yml", "push", mergeSha);
  }

  /** A plan of the main manifest with the write key, as a person would check. */
  async function planMain(): Promise<{ code: number | null; stdout: string }> {
    const path = join(workdir, "main.yaml");
    writeFileSync(path, mainManifest);
    return runCliInProcess(["plan", "-f", path, "--detailed-exitcode"], {
      env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: WRITE_KEY },
      cwd: workdir,
    });
  }

  /** Changes a record by hand, as someone in the service's UI would. */
  async function editByHand(project: string, name: string, fields: Record<string, unknown>): Promise<void> {
    const headers = { authorization: `Bearer ${WRITE_KEY}`, "content-type": "application/json" };
    const list = (await (
      await fetch(`${emulator.url}/api/projects/${project}/plugin_configs/?limit=100`, { headers })
    ).json()) as { results: { id: number; name: string }[] };
    const record = list.results.find((candidate) => candidate.name === name);
    if (record === undefined) throw new Error(`no record ${name} in project ${project}`);
    const response = await fetch(`${emulator.url}/api/projects/${project}/plugin_configs/${record.id}/`, {
      method: "PATCH",
      headers,
      body: JSON.stringify(fields),
    });
    expect(response.status).toBe(200);
  }

  const comments = (pull: PullRequest) => github.issue(pull.number).comments;
  const secretFree = (result: JobResult | undefined) => {
    const text = `${result?.log ?? ""}\n${result?.summary ?? ""}`;
    expect(text).not.toContain(READ_KEY);
    expect(text).not.toContain(WRITE_KEY);
  };
  const withTaxonomy = (description: string) =>
    mainManifest.replace(/description: Renames events[^\n]*/, `description: ${description}`);

  it("plans a pull request into one sticky comment, and uploads the plan of its head commit", async () => {
    const pull = github.openPullRequest(7, "a1a1a1");
    // Someone else's comment with the marker is not the one to update.
    github.issue(7).comments.push({ id: 1, body: `${COMMENT_MARKER} fake plan`, user: { login: "mallory" } });

    const first = await planPullRequest(pull, example);
    expect(first.result, first.log).toBe("success");
    secretFree(first);
    const mine = comments(pull).filter((comment) => comment.user.login === BOT);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.body).toContain(COMMENT_MARKER);
    expect(mine[0]?.body).toContain("<!-- pcsync-plan -->");
    expect(mine[0]?.body).toContain("to create");
    expect(mine[0]?.body).toContain("Plan of a1a1a1");
    expect(comments(pull)[0]?.body).toBe(`${COMMENT_MARKER} fake plan`);
    expect(first.summary).toContain("<!-- pcsync-plan -->");

    // A second push: the same comment, updated; a plan for the new head commit.
    const second = await planPullRequest(
      { ...pull, head: { ...pull.head, sha: "b2b2b2" } },
      withTaxonomy("Renames events"),
    );
    expect(second.result, second.log).toBe("success");
    expect(comments(pull).filter((comment) => comment.user.login === BOT)).toHaveLength(1);
    expect(mine[0]?.id).toBe(comments(pull)[1]?.id);
    expect(comments(pull)[1]?.body).toContain("Plan of b2b2b2");
    expect(comments(pull)[1]?.body).toContain("Renames events");
    expect(github.artifacts.map((artifact) => artifact.name)).toEqual([
      "pcsync-plan-a1a1a1",
      "pcsync-plan-b2b2b2",
    ]);
    const saved = JSON.parse(github.artifacts[1]?.files["plan.json"] ?? "{}") as { format?: string };
    expect(saved.format).toBe("pcsync-plan");

    // A plan that fails replaces the old plan in the comment, so it is not taken for current.
    const broken = await planPullRequest(
      { ...pull, head: { ...pull.head, sha: "c3c3c3" } },
      example.replace("enabled: true", "enabeld: true"),
    );
    expect(broken.result).toBe("failure");
    expect(comments(pull)[1]?.body).toContain("pcsync plan failed");
    expect(comments(pull)[1]?.body).not.toContain("to create");
    expect(github.artifacts).toHaveLength(2);
    pull.head.sha = "b2b2b2";
  });

  it("validates a fork's pull request only: no secrets, no plan, no comment", async () => {
    const pull = github.openPullRequest(8, "f0f0f0", true);
    const result = await planPullRequest(pull, example.replace("enabled: true", "enabeld: true"));
    expect(result.result).toBe("failure");
    expect(result.steps.plan?.outcome).toBe("skipped");
    expect(result.log).toMatch(/::error file=pcsync\.yaml,line=\d+,col=\d+::/);
    expect(result.log).not.toContain("No API key");
    expect(comments(pull)).toEqual([]);
    expect(github.artifacts.some((artifact) => artifact.name === "pcsync-plan-f0f0f0")).toBe(false);
  });

  it("applies a plan of main on merge, behind production, and says it is the reviewed plan", async () => {
    const pull = github.pulls.find((candidate) => candidate.number === 7) as PullRequest;
    const results = await mergePullRequest(pull, withTaxonomy("Renames events"), "m1m1m1");
    expect(results.plan?.result, results.plan?.log).toBe("success");
    expect(results.plan?.log).toContain(
      "Main's plan makes exactly the changes of the reviewed plan of pull request #7.",
    );
    expect(results.plan?.log).not.toContain("::warning::");
    const apply = results.apply;
    expect(apply?.result, apply?.log).toBe("success");
    expect(apply?.environment).toBe("production");
    secretFree(results.plan);
    secretFree(apply);
    expect((await planMain()).code).toBe(0);
  });

  it("never applies a pull request's artifact: an altered plan and a hand edit are only shown", async () => {
    // A plan altered after review (by a workflow changed in the pull request, say): compared, not used.
    const crafted = github.openPullRequest(9, "d4d4d4");
    const manifest = withTaxonomy("Renames events, v2");
    expect((await planPullRequest(crafted, manifest)).result).toBe("success");
    const artifact = github.artifacts.find((candidate) => candidate.name === "pcsync-plan-d4d4d4");
    if (artifact === undefined) throw new Error("no artifact");
    artifact.files["plan.json"] = (artifact.files["plan.json"] ?? "").replace(
      '"Renames events, v2"',
      '"pwned"',
    );
    const altered = await mergePullRequest(crafted, manifest, "m2m2m2");
    expect(altered.plan?.log).toContain("holds changes that main's plan does not");
    expect(altered.plan?.log).toContain('set description of "Taxonomy Standardizer"');
    expect(altered.plan?.log).toContain('to "pwned"');
    expect(altered.apply?.result, altered.apply?.log).toBe("success");
    expect((await planMain()).code).toBe(0);

    // A record changed by hand after the pull request's plan: main's plan puts it back, and says
    // that this goes beyond the reviewed plan, for the reviewers to read before they approve.
    const edited = github.openPullRequest(10, "e5e5e5");
    const next = withTaxonomy("Renames events, v3");
    expect((await planPullRequest(edited, next)).result).toBe("success");
    await editByHand("1", "Taxonomy Standardizer", { enabled: false });
    const results = await mergePullRequest(edited, next, "m3m3m3");
    expect(results.plan?.log).toContain(
      "::warning::Main's plan does more than the reviewed plan of pull request #10",
    );
    expect(results.plan?.log).toContain('set enabled of "Taxonomy Standardizer"');
    expect(results.apply?.result, results.apply?.log).toBe("success");
    expect((await planMain()).code).toBe(0);
  });

  it("loses no merge: a run cancelled while another waited is applied by the next, an expired plan is planned again", async () => {
    // Two merges while an apply waited for approval: GitHub cancels the first one's waiting run.
    const first = github.openPullRequest(13, "f1f1f1");
    const second = github.openPullRequest(14, "f2f2f2");
    const withFirst = withTaxonomy("Renames events, v4");
    const withSecond = mainManifest.replace(
      "plugin: 40\n          enabled: true",
      "plugin: 40\n          enabled: false",
    );
    expect(withSecond).not.toBe(mainManifest);
    expect((await planPullRequest(first, withFirst)).result).toBe("success");
    expect((await planPullRequest(second, withSecond)).result).toBe("success");
    github.merge(first, "m4m4m4");
    // ... and the second's plan expired before its merge (artifacts are kept 30 days).
    for (const artifact of github.artifacts)
      if (artifact.name === "pcsync-plan-f2f2f2") artifact.expired = true;
    const both = withFirst.replace(
      "plugin: 40\n          enabled: true",
      "plugin: 40\n          enabled: false",
    );
    const results = await mergePullRequest(second, both, "m5m5m5");
    expect(results.plan?.log).toContain(
      "::warning::The plan of pull request #14 (artifact pcsync-plan-f2f2f2) has expired.",
    );
    expect(results.apply?.environment).toBe("production");
    expect(results.apply?.result, results.apply?.log).toBe("success");
    // Both merges are applied: main's manifest, which holds both, plans to no changes.
    expect((await planMain()).code).toBe(0);
  });

  it("plans a push without a merged pull request, and asks no approval when nothing changes", async () => {
    const results = await runOnMain("pcsync-apply.yml", "push", "d1r3c7");
    expect(results.plan?.result).toBe("success");
    expect(results.plan?.log).toContain("without a merged pull request");
    expect(results.plan?.outputs["has-changes"]).toBe("false");
    expect(results.apply?.result).toBe("skipped");
  });

  it("keeps one drift issue open while drift lasts, and closes it when the drift is gone", async () => {
    await editByHand("1", "Taxonomy Standardizer", { enabled: false });
    const drifted = await runOnMain("pcsync-drift.yml", "schedule", "m3m3m3");
    expect(drifted.drift?.result).toBe("failure");
    expect(drifted.drift?.log).toContain("the service differs from the manifest");
    secretFree(drifted.drift);
    const opened = github.issues.filter((issue) => issue.user.login === BOT);
    expect(opened).toHaveLength(1);
    expect(opened[0]?.body).toContain(ISSUE_MARKER);
    expect(opened[0]?.body).toContain("enabled: false → true");

    // The same drift the next night: the same issue, untouched; more drift: updated, with a comment.
    await runOnMain("pcsync-drift.yml", "schedule", "m3m3m3");
    expect(github.issues.filter((issue) => issue.user.login === BOT)).toHaveLength(1);
    expect(opened[0]?.comments).toEqual([]);
    await editByHand("2", "Unduplicator", { enabled: false });
    await runOnMain("pcsync-drift.yml", "workflow_dispatch", "m3m3m3");
    expect(opened[0]?.comments).toHaveLength(1);
    expect(opened[0]?.body).toContain("Unduplicator");

    // The sharded check: each drifting project is in one failing shard; the clean shards pass.
    const sharded = await runOnMain("pcsync-drift-sharded.yml", "schedule", "m3m3m3");
    const shards = sharded.drift?.matrix ?? [];
    expect(shards).toHaveLength(4);
    const failing = shards.filter((shard) => shard.result === "failure");
    expect(failing.length).toBeGreaterThan(0);
    for (const name of ["Taxonomy Standardizer", "Unduplicator"]) {
      expect(
        failing.filter((shard) => shard.summary.includes(name)),
        name,
      ).toHaveLength(1);
    }
    for (const shard of shards.filter((candidate) => candidate.result === "success")) {
      expect(shard.summary).not.toMatch(/Taxonomy Standardizer|Unduplicator/);
    }

    // By hand ("Run workflow"): main is planned with the read key, then that plan applied.
    const dispatched = await runOnMain("pcsync-apply.yml", "workflow_dispatch", "m3m3m3");
    expect(dispatched.plan?.result, dispatched.plan?.log).toBe("success");
    expect(dispatched.apply?.result, dispatched.apply?.log).toBe("success");
    const gone = await runOnMain("pcsync-drift.yml", "schedule", "m3m3m3");
    expect(gone.drift?.result, gone.drift?.log).toBe("success");
    expect(opened[0]).toMatchObject({ state: "closed", state_reason: "completed" });
    expect(opened[0]?.comments.at(-1)?.body).toContain("No drift any more");
  });

  it("rolls a change out in waves on merge, behind production, and uploads the rollout's journals for a re-run", async () => {
    // The example manifest with a rollout of two waves, no bake (the emulator's logs need none).
    const changed = withTaxonomy("Renames events, rolled out in waves");
    const rollout = changed.replace(
      "\nprojects:",
      "\nrollout:\n  waves:\n    - name: canary\n      percent: 50\n    - name: rest\n      percent: 100\n  bake: 0s\n  health:\n    logs:\n      min_entries: 0\nprojects:",
    );
    expect(rollout).toContain("rollout:\n  waves:");
    mainManifest = rollout;
    const results = await runOnMain("pcsync-rollout.yml", "push", "w1w1w1");
    expect(results.rollout?.result, results.rollout?.log).toBe("success");
    expect(results.rollout?.environment).toBe("production");
    expect(results.rollout?.log).toContain("Rollout complete");
    secretFree(results.rollout);
    // The artifact holds the rollout's journal and its waves' journals, where a re-run looks.
    const run = github.runs.findLast(
      (candidate) => candidate.path === ".github/workflows/pcsync-rollout.yml",
    );
    const artifact = github.artifacts.find((candidate) => candidate.name === `pcsync-rollout-${run?.id}`);
    const files = Object.keys(artifact?.files ?? {});
    expect(files).toContain("rollout/journal.jsonl");
    expect(
      files.some((file) => /^rollout\/.*-wave-1\.jsonl$/.test(file)),
      files.join(", "),
    ).toBe(true);
    expect((await planMain()).code).toBe(0);
    // The tests after this one apply without waves.
    mainManifest = changed;
  });

  it("rolls back an apply run from its journal, behind production, and rolls back the rollback", async () => {
    const dispatch = async (inputs: ExpressionObject) => {
      const run = github.startRun("workflow_dispatch", ".github/workflows/pcsync-rollback.yml", "m3m3m3");
      const context = {
        event_name: "workflow_dispatch",
        event: {},
        sha: "m3m3m3",
        ref: "refs/heads/main",
        run_id: run.id,
      };
      const results = await runWorkflow(workflow("pcsync-rollback.yml"), {
        ...setup(context, mainManifest),
        inputs,
      });
      return { id: run.id, results };
    };
    // A change on merge, applied by pcsync-apply.yml, which uploads its journal.
    const pull = github.openPullRequest(12, "r0r0r0");
    const changed = withTaxonomy("Renames events, then rolled back");
    expect((await planPullRequest(pull, changed)).result).toBe("success");
    const applied = await mergePullRequest(pull, changed, "r1r1r1");
    expect(applied.apply?.result, applied.apply?.log).toBe("success");
    const applyRun = github.runs.findLast((run) => run.path === ".github/workflows/pcsync-apply.yml");
    expect((await planMain()).code).toBe(0);

    const undone = await dispatch({ "apply-run-id": String(applyRun?.id), force: false });
    expect(undone.results.preview?.result, undone.results.preview?.log).toBe("success");
    expect(undone.results.preview?.log).toContain("Renames events, then rolled back");
    expect(undone.results.rollback?.result, undone.results.rollback?.log).toBe("success");
    expect(undone.results.rollback?.environment).toBe("production");
    secretFree(undone.results.rollback);
    // Main's manifest now asks for the change again: the service is as before the apply.
    expect((await planMain()).code).toBe(2);

    const redone = await dispatch({ "apply-run-id": String(undone.id), force: false });
    expect(redone.results.rollback?.result, redone.results.rollback?.log).toBe("success");
    expect((await planMain()).code).toBe(0);
  });
});
