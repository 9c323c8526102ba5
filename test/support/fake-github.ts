// An in-memory GitHub for the example workflows' tests: pull requests, comments, issues, workflow
// runs and artifacts, reached through the calls the workflows make (octokit's shape, as
// actions/github-script hands it) and checked against the job token's declared permissions.

import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import type { ExpressionObject, JobState, UsesCall, UsesHandler, UsesResult } from "./actions-runner.js";

export const BOT = "github-actions[bot]";

export interface Comment {
  id: number;
  body: string;
  user: { login: string };
}
export interface Issue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  state_reason?: string;
  user: { login: string };
  comments: Comment[];
  pull_request?: object;
}
export interface PullRequest {
  number: number;
  head: { sha: string; repo: { full_name: string; id: number } };
  base: { ref: string };
  merged_at: string | null;
  merge_commit_sha: string | null;
}
export interface WorkflowRun {
  id: number;
  event: string;
  path: string;
  head_sha: string;
  head_repository_id: number;
}
export interface Artifact {
  id: number;
  name: string;
  expired: boolean;
  created_at: string;
  workflow_run: { id: number; head_sha: string; head_repository_id: number; repository_id: number };
  files: Record<string, string>;
}

type Level = "read" | "write";

export class FakeGitHub {
  readonly repository = { owner: "acme", repo: "plugin-configs", id: 4242 };
  readonly issues: Issue[] = [];
  readonly pulls: PullRequest[] = [];
  /** Commits on main, and the pull request numbers each one is associated with. */
  readonly commitPulls = new Map<string, number[]>();
  readonly runs: WorkflowRun[] = [];
  artifacts: Artifact[] = [];
  private nextId = 100;
  private clock = Date.UTC(2024, 5, 1);

  get fullName(): string {
    return `${this.repository.owner}/${this.repository.repo}`;
  }

  private id(): number {
    this.nextId += 1;
    return this.nextId;
  }

  private now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  issue(number: number): Issue {
    let issue = this.issues.find((candidate) => candidate.number === number);
    if (issue === undefined) {
      // A pull request is an issue too, for its comments.
      issue = {
        number,
        title: "",
        body: "",
        state: "open",
        user: { login: "dev" },
        comments: [],
        pull_request: {},
      };
      this.issues.push(issue);
    }
    return issue;
  }

  openPullRequest(number: number, headSha: string, fork = false): PullRequest {
    const pull: PullRequest = {
      number,
      head: {
        sha: headSha,
        repo: fork
          ? { full_name: "mallory/plugin-configs", id: 666 }
          : { full_name: this.fullName, id: this.repository.id },
      },
      base: { ref: "main" },
      merged_at: null,
      merge_commit_sha: null,
    };
    this.pulls.push(pull);
    this.issue(number);
    return pull;
  }

  merge(pull: PullRequest, mergeSha: string): void {
    pull.merged_at = this.now();
    pull.merge_commit_sha = mergeSha;
    this.commitPulls.set(mergeSha, [pull.number]);
  }

  startRun(event: string, path: string, headSha: string, headRepositoryId = this.repository.id): WorkflowRun {
    const run = { id: this.id(), event, path, head_sha: headSha, head_repository_id: headRepositoryId };
    this.runs.push(run);
    return run;
  }

  /** The octokit client a job's GITHUB_TOKEN gives, limited to the job's permissions. */
  octokit(job: JobState) {
    const permissions = job.permissions;
    const require = (scope: string, level: Level): void => {
      const granted = permissions[scope];
      if (granted === "write" || (level === "read" && granted === "read")) return;
      throw new Error(`403 Resource not accessible by integration: the job's token lacks ${scope}: ${level}`);
    };
    const checkRepo = (params: { owner: string; repo: string }): void => {
      if (params.owner !== this.repository.owner || params.repo !== this.repository.repo) {
        throw new Error(`404 no repository ${params.owner}/${params.repo}`);
      }
    };
    const issueOrPullScope = (number: number): string =>
      this.issue(number).pull_request === undefined ? "issues" : "pull-requests";
    const rest = {
      issues: {
        listComments: async (params: { owner: string; repo: string; issue_number: number }) => {
          checkRepo(params);
          require(issueOrPullScope(params.issue_number), "read");
          return { data: structuredClone(this.issue(params.issue_number).comments) };
        },
        createComment: async (params: {
          owner: string;
          repo: string;
          issue_number: number;
          body: string;
        }) => {
          checkRepo(params);
          require(issueOrPullScope(params.issue_number), "write");
          checkBodySize(params.body);
          const comment = { id: this.id(), body: params.body, user: { login: BOT } };
          this.issue(params.issue_number).comments.push(comment);
          return { data: structuredClone(comment) };
        },
        updateComment: async (params: { owner: string; repo: string; comment_id: number; body: string }) => {
          checkRepo(params);
          checkBodySize(params.body);
          for (const issue of this.issues) {
            const comment = issue.comments.find((candidate) => candidate.id === params.comment_id);
            if (comment === undefined) continue;
            require(issueOrPullScope(issue.number), "write");
            if (comment.user.login !== BOT)
              throw new Error("403 the token may not edit another user's comment");
            comment.body = params.body;
            return { data: structuredClone(comment) };
          }
          throw new Error(`404 no comment ${params.comment_id}`);
        },
        listForRepo: async (params: { owner: string; repo: string; state?: string; creator?: string }) => {
          checkRepo(params);
          require("issues", "read");
          const found = this.issues.filter(
            (issue) =>
              (params.state === undefined || params.state === "all" || issue.state === params.state) &&
              (params.creator === undefined || issue.user.login === params.creator),
          );
          return { data: structuredClone(found.map(({ comments: _, ...issue }) => issue)) };
        },
        create: async (params: { owner: string; repo: string; title: string; body: string }) => {
          checkRepo(params);
          require("issues", "write");
          checkBodySize(params.body);
          const issue: Issue = {
            number: this.id(),
            title: params.title,
            body: params.body,
            state: "open",
            user: { login: BOT },
            comments: [],
          };
          this.issues.push(issue);
          return { data: { number: issue.number } };
        },
        update: async (params: {
          owner: string;
          repo: string;
          issue_number: number;
          body?: string;
          state?: "open" | "closed";
          state_reason?: string;
        }) => {
          checkRepo(params);
          require("issues", "write");
          const issue = this.issue(params.issue_number);
          if (params.body !== undefined) {
            checkBodySize(params.body);
            issue.body = params.body;
          }
          if (params.state !== undefined) issue.state = params.state;
          if (params.state_reason !== undefined) issue.state_reason = params.state_reason;
          return { data: { number: issue.number } };
        },
      },
      repos: {
        listPullRequestsAssociatedWithCommit: async (params: {
          owner: string;
          repo: string;
          commit_sha: string;
        }) => {
          checkRepo(params);
          require("pull-requests", "read");
          const numbers = this.commitPulls.get(params.commit_sha) ?? [];
          return { data: structuredClone(this.pulls.filter((pull) => numbers.includes(pull.number))) };
        },
      },
      actions: {
        listArtifactsForRepo: async (params: { owner: string; repo: string; name?: string }) => {
          checkRepo(params);
          require("actions", "read");
          const found = this.artifacts.filter(
            (artifact) => params.name === undefined || artifact.name === params.name,
          );
          const artifacts = found.map(({ files: _, ...artifact }) => artifact);
          return { data: structuredClone({ total_count: artifacts.length, artifacts }) };
        },
        getWorkflowRun: async (params: { owner: string; repo: string; run_id: number }) => {
          checkRepo(params);
          require("actions", "read");
          const run = this.runs.find((candidate) => candidate.id === params.run_id);
          if (run === undefined) throw new Error(`404 no run ${params.run_id}`);
          return { data: structuredClone(run) };
        },
      },
    };
    const paginate = async <P>(
      method: (params: P) => Promise<{ data: unknown }>,
      params: P,
    ): Promise<unknown[]> => {
      const { data } = await method(params);
      if (Array.isArray(data)) return data;
      // List endpoints that wrap their items, as octokit's paginate unwraps them.
      const wrapped = data as { artifacts?: unknown[] };
      if (Array.isArray(wrapped.artifacts)) return wrapped.artifacts;
      throw new Error("paginate: not a list endpoint");
    };
    return { rest, paginate };
  }

  /** Handlers for the `uses:` of the example workflows that talk to GitHub. */
  handlers(): Record<string, UsesHandler> {
    return {
      "actions/github-script": (call) => this.githubScript(call),
      "actions/upload-artifact": async (call) => {
        const github = call.job.contexts.github as ExpressionObject;
        const run = this.runs.find((candidate) => candidate.id === Number(github.run_id));
        if (run === undefined) throw new Error("upload-artifact outside a started run");
        const path = call.with.path ?? "";
        // A file, or a directory's files (hidden ones with include-hidden-files) by their paths in it.
        let files: Record<string, string>;
        try {
          const absolute = resolve(call.cwd, path);
          files = statSync(absolute).isDirectory()
            ? Object.fromEntries(
                (readdirSync(absolute, { recursive: true, encoding: "utf8" }) as string[])
                  .filter((name) => statSync(join(absolute, name)).isFile())
                  .map((name) => [name, readFileSync(join(absolute, name), "utf8")]),
              )
            : { [basename(path)]: readFileSync(absolute, "utf8") };
        } catch {
          files = {};
        }
        if (Object.keys(files).length === 0) {
          if (call.with["if-no-files-found"] === "ignore") return { log: `No files were found: ${path}\n` };
          return { failed: true, log: `No files were found with the provided path: ${path}.\n` };
        }
        const sameName = (artifact: { workflow_run: { id: number }; name: string }) =>
          artifact.workflow_run.id === run.id && artifact.name === call.with.name;
        if (call.with.overwrite === "true")
          this.artifacts = this.artifacts.filter((artifact) => !sameName(artifact));
        if (this.artifacts.some(sameName)) {
          return { failed: true, log: `an artifact named ${call.with.name} exists in this run\n` };
        }
        this.artifacts.push({
          id: this.id(),
          name: call.with.name ?? "artifact",
          expired: false,
          created_at: this.now(),
          workflow_run: {
            id: run.id,
            head_sha: run.head_sha,
            head_repository_id: run.head_repository_id,
            repository_id: this.repository.id,
          },
          files,
        });
        return {};
      },
      "actions/download-artifact": async (call) => {
        const github = call.job.contexts.github as ExpressionObject;
        const runId = Number(call.with["run-id"] || github.run_id);
        // Another run's artifacts need a token (github-token) with actions: read.
        if (runId !== Number(github.run_id)) {
          if (call.with["github-token"] !== github.token)
            return { failed: true, log: "no github-token given\n" };
          if (call.job.permissions.actions === undefined) {
            return { failed: true, log: "403: the job's token lacks actions: read\n" };
          }
        }
        const artifact = this.artifacts.find(
          (candidate) =>
            candidate.workflow_run.id === runId && candidate.name === call.with.name && !candidate.expired,
        );
        if (artifact === undefined) {
          return { failed: true, log: `Artifact not found for name: ${call.with.name} in run ${runId}\n` };
        }
        const target = call.with.path || call.cwd;
        mkdirSync(target, { recursive: true });
        for (const [name, content] of Object.entries(artifact.files)) {
          mkdirSync(dirname(join(target, name)), { recursive: true });
          writeFileSync(join(target, name), content);
        }
        return {};
      },
    };
  }

  private async githubScript(call: UsesCall): Promise<UsesResult> {
    const github = call.job.contexts.github as ExpressionObject;
    const outputs: Record<string, string> = {};
    let log = "";
    let failed = false;
    const core = {
      setOutput: (name: string, value: unknown) => {
        outputs[name] = String(value);
      },
      setFailed: (message: string) => {
        failed = true;
        log += `::error::${message}\n`;
      },
      info: (message: string) => {
        log += `${message}\n`;
      },
      notice: (message: string) => {
        log += `::notice::${message}\n`;
      },
      warning: (message: string) => {
        log += `::warning::${message}\n`;
      },
    };
    const context = {
      eventName: github.event_name,
      sha: github.sha,
      ref: github.ref,
      runId: Number(github.run_id),
      serverUrl: "https://github.com",
      repo: { owner: this.repository.owner, repo: this.repository.repo },
      payload: github.event,
    };
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
      ...args: string[]
    ) => (...values: unknown[]) => Promise<unknown>;
    const script = new AsyncFunction(
      "require",
      "github",
      "context",
      "core",
      "process",
      call.with.script ?? "",
    );
    try {
      // `process` is the step's own: its env holds the step's env, as in the real action.
      await script(createRequire(import.meta.url), this.octokit(call.job), context, core, { env: call.env });
    } catch (error) {
      failed = true;
      log += `::error::Unhandled error: ${error instanceof Error ? error.message : String(error)}\n`;
    }
    return { outputs, failed, log };
  }
}

/** GitHub refuses comment and issue bodies over 65,536 characters. */
function checkBodySize(body: string): void {
  if (body.length > 65_536) throw new Error(`422 body is too long (${body.length} characters)`);
}
