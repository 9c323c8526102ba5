// A small stand-in for the GitHub Actions runner, enough to run this repository's action and
// example workflows against the emulator: `${{ }}` expressions, `if:` conditions, `run:` steps
// with bash and GITHUB_OUTPUT/ENV/PATH/STEP_SUMMARY, composite actions, job needs/outputs,
// environments with their own secrets, and matrices. Other `uses:` go to handlers a test gives.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { parse } from "yaml";

// ---------------------------------------------------------------------------------------------
// Expressions

export type ExpressionValue = string | number | boolean | null | ExpressionObject | ExpressionValue[];
export interface ExpressionObject {
  [key: string]: ExpressionValue | undefined;
}

interface Token {
  kind: "string" | "number" | "word" | "op";
  text: string;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const rest = source.slice(index);
    const space = /^\s+/.exec(rest);
    if (space) {
      index += space[0].length;
      continue;
    }
    const string = /^'((?:[^']|'')*)'/.exec(rest);
    if (string) {
      tokens.push({ kind: "string", text: (string[1] ?? "").replaceAll("''", "'") });
      index += string[0].length;
      continue;
    }
    const number = /^-?\d+(\.\d+)?/.exec(rest);
    if (number) {
      tokens.push({ kind: "number", text: number[0] });
      index += number[0].length;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(rest);
    if (word) {
      tokens.push({ kind: "word", text: word[0] });
      index += word[0].length;
      continue;
    }
    const op = /^(==|!=|&&|\|\||<=|>=|[()!.,<>[\]*])/.exec(rest);
    if (op) {
      tokens.push({ kind: "op", text: op[0] });
      index += op[0].length;
      continue;
    }
    throw new Error(`cannot read the expression ${JSON.stringify(source)} at ${JSON.stringify(rest)}`);
  }
  return tokens;
}

export interface ExpressionScope {
  contexts: Record<string, ExpressionValue | undefined>;
  /** Whether an earlier step (or needed job) failed, for success()/failure(). */
  failed: boolean;
  cancelled?: boolean;
}

function isTruthy(value: ExpressionValue | undefined): boolean {
  return !(
    value === undefined ||
    value === null ||
    value === false ||
    value === 0 ||
    value === "" ||
    Number.isNaN(value)
  );
}

function toNumber(value: ExpressionValue | undefined): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "string") return value.trim() === "" ? 0 : Number(value);
  return Number.NaN;
}

/** GitHub's loose equality: strings compare case-insensitively, other mixes as numbers. */
function looseEquals(left: ExpressionValue | undefined, right: ExpressionValue | undefined): boolean {
  const a = left ?? null;
  const b = right ?? null;
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
  const isObject = (value: ExpressionValue): boolean => value !== null && typeof value === "object";
  if (isObject(a) || isObject(b)) return a === b;
  return toNumber(a) === toNumber(b);
}

export function stringify(value: ExpressionValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function index(value: ExpressionValue | undefined, key: string): ExpressionValue | undefined {
  if (value === null || value === undefined || typeof value !== "object") return null;
  if (Array.isArray(value)) return value[Number(key)] ?? null;
  // Context keys are case-insensitive.
  const found = Object.keys(value).find((name) => name.toLowerCase() === key.toLowerCase());
  return found === undefined ? null : (value[found] ?? null);
}

const FUNCTIONS: Record<
  string,
  (scope: ExpressionScope, args: (ExpressionValue | undefined)[]) => ExpressionValue
> = {
  always: () => true,
  success: (scope) => !scope.failed && scope.cancelled !== true,
  failure: (scope) => scope.failed,
  cancelled: (scope) => scope.cancelled === true,
  contains: (_, [haystack, needle]) =>
    Array.isArray(haystack)
      ? haystack.some((item) => looseEquals(item, needle))
      : stringify(haystack).toLowerCase().includes(stringify(needle).toLowerCase()),
  startsWith: (_, [text, prefix]) =>
    stringify(text).toLowerCase().startsWith(stringify(prefix).toLowerCase()),
  endsWith: (_, [text, suffix]) => stringify(text).toLowerCase().endsWith(stringify(suffix).toLowerCase()),
  format: (_, [template, ...args]) =>
    stringify(template).replace(/\{(\d+)\}/g, (_match, position: string) =>
      stringify(args[Number(position)]),
    ),
  toJSON: (_, [value]) => JSON.stringify(value ?? null, null, 2),
  fromJSON: (_, [value]) => JSON.parse(stringify(value)) as ExpressionValue,
};

/** Evaluates one expression (the text inside `${{ }}`, or an `if:`). */
export function evaluate(source: string, scope: ExpressionScope): ExpressionValue | undefined {
  const tokens = tokenize(source);
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const take = (text?: string): Token => {
    const token = tokens[position];
    if (token === undefined || (text !== undefined && token.text !== text)) {
      throw new Error(`expected ${text ?? "more"} in the expression ${JSON.stringify(source)}`);
    }
    position += 1;
    return token;
  };
  const primary = (): ExpressionValue | undefined => {
    const token = take();
    if (token.kind === "string") return token.text;
    if (token.kind === "number") return Number(token.text);
    if (token.text === "(") {
      const value = or();
      take(")");
      return value;
    }
    if (token.text === "!") return !isTruthy(primary());
    if (token.kind !== "word") throw new Error(`unexpected ${token.text} in ${JSON.stringify(source)}`);
    if (token.text === "true") return true;
    if (token.text === "false") return false;
    if (token.text === "null") return null;
    if (peek()?.text === "(") {
      take("(");
      const args: (ExpressionValue | undefined)[] = [];
      while (peek()?.text !== ")") {
        args.push(or());
        if (peek()?.text === ",") take(",");
      }
      take(")");
      const fn = FUNCTIONS[token.text];
      if (fn === undefined) throw new Error(`the function ${token.text}() is not supported here`);
      return fn(scope, args);
    }
    if (!(token.text in scope.contexts))
      throw new Error(`unknown context ${token.text} in ${JSON.stringify(source)}`);
    let value = scope.contexts[token.text];
    for (;;) {
      if (peek()?.text === ".") {
        take(".");
        value = index(value, take().text);
      } else if (peek()?.text === "[") {
        take("[");
        value = index(value, stringify(or()));
        take("]");
      } else return value;
    }
  };
  const comparison = (): ExpressionValue | undefined => {
    const left = primary();
    const op = peek()?.text;
    if (op === "==" || op === "!=") {
      take();
      const equal = looseEquals(left, primary());
      return op === "==" ? equal : !equal;
    }
    return left;
  };
  const and = (): ExpressionValue | undefined => {
    let left = comparison();
    while (peek()?.text === "&&") {
      take();
      const right = comparison();
      left = isTruthy(left) ? right : left;
    }
    return left;
  };
  const or = (): ExpressionValue | undefined => {
    let left = and();
    while (peek()?.text === "||") {
      take();
      const right = and();
      left = isTruthy(left) ? left : right;
    }
    return left;
  };
  const value = or();
  if (position !== tokens.length)
    throw new Error(`unexpected text in the expression ${JSON.stringify(source)}`);
  return value;
}

/** Replaces each `${{ expression }}` in a string with its value, as the runner does. */
export function expand(text: string, scope: ExpressionScope): string {
  return text.replace(/\$\{\{(.*?)\}\}/gs, (_, expression: string) => stringify(evaluate(expression, scope)));
}

/** An `if:` condition: without a status function, success() is implied. */
export function condition(text: string | boolean | undefined, scope: ExpressionScope): boolean {
  if (text === undefined) return FUNCTIONS.success?.(scope, []) === true;
  if (typeof text === "boolean") return text && !scope.failed;
  const source = text.trim().replace(/^\$\{\{(.*)\}\}$/s, "$1");
  const value = evaluate(source, scope);
  const hasStatus = /\b(always|success|failure|cancelled)\s*\(/.test(source);
  return hasStatus ? isTruthy(value) : !scope.failed && isTruthy(value);
}

// ---------------------------------------------------------------------------------------------
// Steps, composite actions, jobs

export interface Step {
  id?: string;
  name?: string;
  if?: string | boolean;
  run?: string;
  shell?: string;
  uses?: string;
  with?: Record<string, string | number | boolean>;
  env?: Record<string, string | number | boolean>;
  "working-directory"?: string;
  "continue-on-error"?: boolean;
}

export interface Job {
  name?: string;
  if?: string | boolean;
  needs?: string | string[];
  environment?: string | { name: string };
  permissions?: Record<string, string> | string;
  env?: Record<string, string | number | boolean>;
  outputs?: Record<string, string>;
  strategy?: { matrix?: Record<string, (string | number)[]>; "fail-fast"?: boolean };
  steps: Step[];
}

export interface Workflow {
  name?: string;
  on: unknown;
  permissions?: unknown;
  env?: Record<string, string | number | boolean>;
  jobs: Record<string, Job>;
}

export interface StepRecord {
  outputs: Record<string, string>;
  outcome: "success" | "failure" | "skipped";
  conclusion: "success" | "failure" | "skipped";
}

/** What a `uses:` step is handed: its `with:` values and environment, expanded. */
export interface UsesCall {
  uses: string;
  with: Record<string, string>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  job: JobState;
}

export interface UsesResult {
  outputs?: Record<string, string>;
  failed?: boolean;
  log?: string;
}

export type UsesHandler = (call: UsesCall) => Promise<UsesResult>;

export interface RunnerSetup {
  /** The checkout: the working directory of `run:` steps. */
  workspace: string;
  /** The `github` context (event_name, event, sha, ref, repository, token, run_id, ...). */
  github: ExpressionObject;
  /** The `inputs` context: a workflow_dispatch's inputs. */
  inputs?: ExpressionObject;
  vars?: Record<string, string>;
  /** Repository secrets, in every job. */
  secrets?: Record<string, string>;
  /** Environment secrets, only in jobs bound to that environment. */
  environmentSecrets?: Record<string, Record<string, string>>;
  /** The environment of every process (PATH, HOME, ...). */
  baseEnv: NodeJS.ProcessEnv;
  /** Handlers of `uses:` by action name without the ref (`actions/checkout`). */
  actions: Record<string, UsesHandler>;
  /** Composite actions by name without the ref, mapped to their directory. */
  compositeActions?: Record<string, string>;
}

export interface JobState {
  setup: RunnerSetup;
  jobId: string;
  env: NodeJS.ProcessEnv;
  path: string[];
  temp: string;
  summaryFile: string;
  log: string;
  failed: boolean;
  environment: string | undefined;
  /** The GITHUB_TOKEN's permissions: the job's, else the workflow's. */
  permissions: Record<string, string>;
  contexts: Record<string, ExpressionValue | undefined>;
}

function runBash(
  script: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  temp: string,
): Promise<{ status: number; output: string }> {
  const file = join(mkdtempSync(join(temp, "step-")), "script.sh");
  writeFileSync(file, script);
  return new Promise((resolve, reject) => {
    // What the runner runs for `shell: bash`.
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", file], { cwd, env });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status: status ?? -1, output }));
  });
}

/** Reads a GITHUB_OUTPUT/GITHUB_ENV file: `name=value` lines and `name<<DELIMITER` blocks. */
export function parseCommandFile(path: string): Record<string, string> {
  const values: Record<string, string> = {};
  if (!existsSync(path)) return values;
  const lines = readFileSync(path, "utf8").split("\n");
  for (let line = 0; line < lines.length; line += 1) {
    const text = lines[line] ?? "";
    if (text === "") continue;
    const heredoc = /^([^=]+)<<(.+)$/.exec(text);
    if (heredoc && !text.includes("=")) {
      const [, name = "", marker] = heredoc;
      const body: string[] = [];
      line += 1;
      while (line < lines.length && lines[line] !== marker) body.push(lines[line++] ?? "");
      if (line >= lines.length) throw new Error(`${path}: no closing ${marker} for ${name}`);
      values[name] = body.join("\n");
      continue;
    }
    const equals = text.indexOf("=");
    if (equals < 0) throw new Error(`${path}: not a name=value line: ${JSON.stringify(text)}`);
    values[text.slice(0, equals)] = text.slice(equals + 1);
  }
  return values;
}

function stringValues(values: Record<string, string | number | boolean> | undefined, scope: ExpressionScope) {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(values ?? {})) result[name] = expand(String(value), scope);
  return result;
}

interface StepContext {
  job: JobState;
  /** Contexts beyond the job's: `inputs` in a composite action. */
  extraContexts: Record<string, ExpressionValue | undefined>;
  /** The environment steps start from (a composite action's: its `uses:` step's). */
  env: () => NodeJS.ProcessEnv;
  actionPath?: string;
  steps: Record<string, StepRecord>;
}

async function runSteps(steps: Step[], context: StepContext): Promise<boolean> {
  let failed = false;
  let counter = 0;
  for (const step of steps) {
    counter += 1;
    const stepsContext: ExpressionObject = {};
    for (const [id, record] of Object.entries(context.steps)) stepsContext[id] = { ...record };
    const scope: ExpressionScope = {
      contexts: {
        ...context.job.contexts,
        ...context.extraContexts,
        steps: stepsContext,
        env: { ...context.env() },
      },
      failed: failed || context.job.failed,
    };
    const id = step.id ?? `__step${counter}`;
    if (!condition(step.if, scope)) {
      context.steps[id] = { outputs: {}, outcome: "skipped", conclusion: "skipped" };
      continue;
    }
    const env: NodeJS.ProcessEnv = { ...context.env(), ...stringValues(step.env, scope) };
    const stepDir = mkdtempSync(join(context.job.temp, "files-"));
    const files = {
      GITHUB_OUTPUT: join(stepDir, "output"),
      GITHUB_ENV: join(stepDir, "env"),
      GITHUB_PATH: join(stepDir, "path"),
    };
    Object.assign(env, files, {
      GITHUB_STEP_SUMMARY: context.job.summaryFile,
      RUNNER_TEMP: context.job.temp,
      GITHUB_WORKSPACE: context.job.setup.workspace,
      GITHUB_ACTIONS: "true",
      PATH: [...context.job.path, context.job.setup.baseEnv.PATH ?? ""].join(delimiter),
    });
    if (context.actionPath !== undefined) env.GITHUB_ACTION_PATH = context.actionPath;
    let outcome: StepRecord["outcome"] = "success";
    let outputs: Record<string, string> = {};
    context.job.log += `\n## step ${step.name ?? step.id ?? step.uses ?? counter}\n`;
    const cwd = step["working-directory"]
      ? join(context.job.setup.workspace, expand(step["working-directory"], scope))
      : context.job.setup.workspace;
    if (step.run !== undefined) {
      const result = await runBash(expand(step.run, scope), env, cwd, context.job.temp);
      context.job.log += result.output;
      if (result.status !== 0) {
        outcome = "failure";
        context.job.log += `\n(exit code ${result.status})\n`;
      }
      outputs = parseCommandFile(files.GITHUB_OUTPUT);
      Object.assign(context.job.env, parseCommandFile(files.GITHUB_ENV));
      if (existsSync(files.GITHUB_PATH)) {
        const added = readFileSync(files.GITHUB_PATH, "utf8").split("\n").filter(Boolean);
        context.job.path.unshift(...added.reverse());
      }
    } else if (step.uses !== undefined) {
      const name = step.uses.replace(/@.*$/, "");
      const withValues = stringValues(step.with, scope);
      const composite = context.job.setup.compositeActions?.[name];
      if (composite !== undefined) {
        const result = await runCompositeAction(composite, withValues, env, context.job);
        outputs = result.outputs;
        if (result.failed) outcome = "failure";
      } else {
        const handler = context.job.setup.actions[name];
        if (handler === undefined) throw new Error(`no handler for uses: ${step.uses}`);
        const result = await handler({ uses: step.uses, with: withValues, env, cwd, job: context.job });
        outputs = result.outputs ?? {};
        context.job.log += result.log ?? "";
        if (result.failed === true) outcome = "failure";
      }
    } else throw new Error(`a step with neither run nor uses: ${JSON.stringify(step)}`);
    const conclusion = outcome === "failure" && step["continue-on-error"] === true ? "success" : outcome;
    context.steps[id] = { outputs, outcome, conclusion };
    if (conclusion === "failure") failed = true;
  }
  return failed;
}

interface ActionInput {
  default?: string;
  required?: boolean;
}
interface CompositeAction {
  inputs?: Record<string, ActionInput>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

/** Runs a composite action as the runner does: its inputs, its own steps context, its outputs. */
export async function runCompositeAction(
  directory: string,
  withValues: Record<string, string>,
  env: NodeJS.ProcessEnv,
  job: JobState,
): Promise<{ outputs: Record<string, string>; failed: boolean; steps: Record<string, StepRecord> }> {
  const action = parse(readFileSync(join(directory, "action.yml"), "utf8")) as CompositeAction;
  if (action.runs.using !== "composite") throw new Error(`${directory} is not a composite action`);
  for (const name of Object.keys(withValues)) {
    if (!(name in (action.inputs ?? {}))) throw new Error(`the action has no input ${name}`);
  }
  const inputs: ExpressionObject = {};
  for (const [name, spec] of Object.entries(action.inputs ?? {}))
    inputs[name] = withValues[name] ?? spec.default ?? "";
  const steps: Record<string, StepRecord> = {};
  const github = { ...(job.contexts.github as ExpressionObject), action_path: directory };
  const failed = await runSteps(action.runs.steps, {
    job,
    extraContexts: { inputs, github },
    env: () => env,
    actionPath: directory,
    steps,
  });
  const stepsContext: ExpressionObject = {};
  for (const [id, record] of Object.entries(steps)) stepsContext[id] = { ...record };
  const scope: ExpressionScope = { contexts: { ...job.contexts, inputs, steps: stepsContext }, failed };
  const outputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.outputs ?? {})) outputs[name] = expand(spec.value, scope);
  return { outputs, failed, steps };
}

export interface JobResult {
  result: "success" | "failure" | "skipped";
  outputs: Record<string, string>;
  steps: Record<string, StepRecord>;
  log: string;
  /** The job's GITHUB_STEP_SUMMARY. */
  summary: string;
  environment: string | undefined;
}

function permissionsOf(declared: unknown): Record<string, string> {
  if (declared === undefined) throw new Error("declare the token's permissions, in the job or the workflow");
  if (typeof declared === "string") throw new Error(`permissions: ${declared} grants more than a job needs`);
  return { ...(declared as Record<string, string>) };
}

/** Runs one job (one matrix combination) with the `needs` results given. */
export async function runJob(
  workflow: Workflow,
  jobId: string,
  setup: RunnerSetup,
  options: { needs?: Record<string, JobResult>; matrix?: ExpressionObject } = {},
): Promise<JobResult> {
  const job = workflow.jobs[jobId];
  if (job === undefined) throw new Error(`no job ${jobId}`);
  const needsContext: ExpressionObject = {};
  for (const [id, result] of Object.entries(options.needs ?? {})) {
    needsContext[id] = { result: result.result, outputs: result.outputs };
  }
  const neededFailed = Object.values(options.needs ?? {}).some((result) => result.result !== "success");
  const environmentName =
    typeof job.environment === "string" ? job.environment : (job.environment?.name ?? undefined);
  const secrets = {
    GITHUB_TOKEN: stringify(setup.github.token),
    ...setup.secrets,
    ...(environmentName === undefined ? {} : setup.environmentSecrets?.[environmentName]),
  };
  const temp = mkdtempSync(join(setup.workspace, "..", `runner-${jobId}-`));
  const contexts: Record<string, ExpressionValue | undefined> = {
    github: setup.github,
    vars: setup.vars ?? {},
    secrets,
    needs: needsContext,
    matrix: options.matrix ?? null,
    runner: { temp, os: "Linux" },
    inputs: setup.inputs ?? {},
    steps: {},
    env: {},
  };
  const scope: ExpressionScope = { contexts, failed: neededFailed };
  if (!condition(job.if, scope)) {
    return { result: "skipped", outputs: {}, steps: {}, log: "", summary: "", environment: environmentName };
  }
  const state: JobState = {
    setup,
    jobId,
    env: {},
    path: [],
    temp,
    summaryFile: join(temp, "step-summary.md"),
    log: "",
    failed: false,
    environment: environmentName,
    permissions: permissionsOf(job.permissions ?? workflow.permissions),
    contexts,
  };
  const jobEnv = { ...stringValues(workflow.env, scope), ...stringValues(job.env, scope) };
  const steps: Record<string, StepRecord> = {};
  // GITHUB_ENV written by a step reaches the later ones.
  const env = (): NodeJS.ProcessEnv => ({ ...setup.baseEnv, ...jobEnv, ...state.env });
  const failed = await runSteps(job.steps, { job: state, extraContexts: {}, env, steps });
  const stepsContext: ExpressionObject = {};
  for (const [id, record] of Object.entries(steps)) stepsContext[id] = { ...record };
  const outputScope: ExpressionScope = { contexts: { ...contexts, steps: stepsContext }, failed };
  const outputs: Record<string, string> = {};
  for (const [name, value] of Object.entries(job.outputs ?? {})) outputs[name] = expand(value, outputScope);
  const summary = existsSync(state.summaryFile) ? readFileSync(state.summaryFile, "utf8") : "";
  return {
    result: failed ? "failure" : "success",
    outputs,
    steps,
    log: state.log,
    summary,
    environment: environmentName,
  };
}

/** Every combination of a matrix of lists. */
export function matrixCombinations(
  matrix: Record<string, (string | number)[]> | undefined,
): ExpressionObject[] {
  if (matrix === undefined) return [{}];
  let combinations: ExpressionObject[] = [{}];
  for (const [name, values] of Object.entries(matrix)) {
    combinations = combinations.flatMap((combination) =>
      values.map((value) => ({ ...combination, [name]: value })),
    );
  }
  return combinations;
}

/** Runs every job of a workflow in an order that respects `needs`. */
export async function runWorkflow(
  workflow: Workflow,
  setup: RunnerSetup,
): Promise<Record<string, JobResult & { matrix?: JobResult[] }>> {
  const results: Record<string, JobResult & { matrix?: JobResult[] }> = {};
  const pending = Object.keys(workflow.jobs);
  while (pending.length > 0) {
    const ready = pending.findIndex((id) => {
      const needs = workflow.jobs[id]?.needs ?? [];
      return (Array.isArray(needs) ? needs : [needs]).every((need) => need in results);
    });
    if (ready < 0) throw new Error(`jobs wait for each other: ${pending.join(", ")}`);
    const [jobId] = pending.splice(ready, 1);
    if (jobId === undefined) break;
    const job = workflow.jobs[jobId];
    const needIds = job?.needs ?? [];
    const needs: Record<string, JobResult> = {};
    for (const need of Array.isArray(needIds) ? needIds : [needIds]) {
      const result = results[need];
      if (result) needs[need] = result;
    }
    // The entries of a matrix run side by side, as on GitHub; each job has its own temp directory.
    const runs = await Promise.all(
      matrixCombinations(job?.strategy?.matrix).map((matrix) =>
        runJob(workflow, jobId, setup, { needs, matrix }),
      ),
    );
    const [first] = runs;
    if (first === undefined) continue;
    const result = runs.some((run) => run.result === "failure")
      ? "failure"
      : runs.every((run) => run.result === "skipped")
        ? "skipped"
        : "success";
    results[jobId] = { ...first, result, ...(runs.length > 1 ? { matrix: runs } : {}) };
  }
  return results;
}

/** Loads a workflow or action YAML file. */
export function loadYaml<T>(path: string): T {
  return parse(readFileSync(path, "utf8")) as T;
}
