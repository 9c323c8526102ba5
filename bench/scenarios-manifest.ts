// Scenarios that go through the CLI as users run it, from YAML files: the built `pcsync validate`
// of one big manifest, and `pcsync plan` of a fleet written as YAML against the emulator, so that
// loading the manifest (before the first request) is measured with everything else.

import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { FAMILY_NAMES } from "../src/families.js";
import type { DesiredFamily } from "../src/manifest/types.js";
import { BENCH_API_KEY, buildFleet, type FleetShape, NO_CHANGES, takeData } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Row, Scenario } from "./harness.js";

/** This build's CLI, or another build's (PCSYNC_BENCH_CLI=path/to/dist/src/cli/main.js) to compare. */
const CLI = process.env.PCSYNC_BENCH_CLI ?? fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
/** Reports the child's own peak RSS and CPU on fd 3 as it exits (rusage of a child is not in Node). */
const REPORT_USAGE = `data:text/javascript,${encodeURIComponent(
  'import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.resourceUsage();writeSync(3,JSON.stringify({rss:u.maxRSS,cpu:u.userCPUTime+u.systemCPUTime}))});',
)}`;
const VALIDATE_RUNS = 5;
// One list request reads a family of up to this many records (the client's page size).
const RECORDS_PER_LIST_REQUEST = 1000;
/** Projects per manifest file of plan-from-yaml: files stay well under the per-file size limit. */
const PROJECTS_PER_FILE = 50;

export const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`;
const mb = (kilobytes: number) => `${(kilobytes / 1024).toFixed(0)} MB`;
const count = (value: number) => value.toLocaleString("en-US");

export interface CliRun {
  exitCode: number | null;
  wallMs: number;
  cpuMs: number;
  /** Peak resident set size of the CLI process, in kilobytes. */
  peakRssKb: number;
  stderr: string;
  /** With -v: when each traced request's line arrived (ms after the start) and its round trip. */
  requests: { at: number; ms: number }[];
}

/** Runs the built CLI in a process of its own, as a user would. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--import", REPORT_USAGE, CLI, ...args], {
      stdio: ["ignore", "ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...env },
    });
    let stderr = "";
    let usage = "";
    let partial = "";
    const requests: CliRun["requests"] = [];
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      const at = performance.now() - started;
      if (stderr.length < 100_000) stderr += chunk;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const match = / -> \d{3} \((\d+) ms/.exec(line);
        if (match) requests.push({ at, ms: Number(match[1]) });
      }
    });
    const usageStream = child.stdio[3] as Readable | null;
    usageStream?.setEncoding("utf8");
    usageStream?.on("data", (chunk: string) => {
      usage += chunk;
    });
    child.on("error", reject);
    child.on("close", (exitCode) => {
      const wallMs = performance.now() - started;
      const reported = usage === "" ? undefined : (JSON.parse(usage) as { rss: number; cpu: number });
      resolve({
        exitCode,
        wallMs,
        cpuMs: (reported?.cpu ?? Number.NaN) / 1000,
        peakRssKb: reported?.rss ?? Number.NaN,
        stderr,
        requests,
      });
    });
  });
}

export function expectSuccess(run: CliRun, what: string): CliRun {
  if (run.exitCode !== 0) {
    throw new Error(`${what} exited with ${run.exitCode}:\n${run.stderr.split("\n").slice(0, 5).join("\n")}`);
  }
  return run;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/** Median, and the spread of the runs around it. */
function describeRuns(values: readonly number[]): string {
  return `${ms(median(values))} (${ms(lowest(values))} - ${ms(highest(values))}, ${values.length} runs)`;
}

const lowest = (values: readonly number[]) =>
  values.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
const highest = (values: readonly number[]) =>
  values.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);

/** The YAML of desired families as a user writes it: positional order, only the fields set. */
export function familiesYaml(families: readonly DesiredFamily[]): string {
  const lines = ["version: 1", "projects:"];
  let project: string | undefined;
  for (const family of families) {
    if (family.project !== project) {
      project = family.project;
      lines.push(`  "${project}":`);
    }
    lines.push(`    ${family.family}:`, "      configs:");
    for (const { fields } of family.configs) {
      lines.push(`        - name: ${fields.name ?? ""}`, `          plugin: ${fields.plugin ?? 1}`);
      if (fields.enabled !== undefined) lines.push(`          enabled: ${fields.enabled}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export async function withTempDir<T>(body: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "pcsync-bench-"));
  try {
    return await body(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function validateRuns(target: string, runs: number): Promise<CliRun[]> {
  const results: CliRun[] = [];
  for (let index = 0; index < runs; index += 1) {
    results.push(expectSuccess(await runCli(["validate", "-f", target]), `pcsync validate -f ${target}`));
  }
  return results;
}

function validateScenario(): Scenario {
  // 10 projects x 2 families x 1,000 configs.
  const shape = { projects: 10, recordsPerFamily: 1000 };
  return {
    id: "validate-20000",
    title: "validate: the built CLI on one manifest file of 20,000 configs (about 1.4 MB)",
    default: true,
    async run() {
      return withTempDir(async (directory) => {
        const file = join(directory, "pcsync.yaml");
        const yaml = familiesYaml(buildFleet(shape, NO_CHANGES).desired.families);
        await writeFile(file, yaml);
        const runs = await validateRuns(file, VALIDATE_RUNS);
        const wall = median(runs.map((run) => run.wallMs));
        const rss = highest(runs.map((run) => run.peakRssKb));
        const version = await runCli(["--version"]);
        const rows: Row[] = [
          { metric: "manifest size", value: `${(yaml.length / 2 ** 20).toFixed(2)} MB, 20,000 configs` },
          {
            metric: "validate wall time, median (min - max)",
            value: describeRuns(runs.map((run) => run.wallMs)),
            target: "< 1,000 ms",
            pass: wall < 1000,
          },
          { metric: "validate CPU time, median", value: ms(median(runs.map((run) => run.cpuMs))) },
          {
            metric: "validate peak RSS (largest run)",
            value: mb(rss),
            target: "< 150 MB",
            pass: rss < 150 * 1024,
          },
          { metric: "for scale: `pcsync --version` wall time", value: ms(version.wallMs) },
        ];
        return { id: this.id, title: this.title, rows };
      });
    },
  };
}

/** Lists every family once without latency: a real service is warm (the CLI under test is not). */
export async function warmUp(url: string, projects: number): Promise<void> {
  const paths: string[] = [];
  for (let project = 1; project <= projects; project += 1) {
    for (const family of FAMILY_NAMES) paths.push(`/api/projects/${project}/${family}/?limit=1000`);
  }
  let next = 0;
  const worker = async () => {
    while (next < Math.min(paths.length, 2000)) {
      const response = await fetch(`${url}${paths[next++]}`, {
        headers: { authorization: `Bearer ${BENCH_API_KEY}` },
      });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

function planFromYamlScenario(shape: FleetShape, isDefault: boolean): Scenario {
  const records = shape.projects * 2 * shape.recordsPerFamily;
  const id = `plan-from-yaml-${records}`;
  return {
    id,
    title: `plan from YAML: the built CLI, ${count(shape.projects)} projects x 2 families x ${count(shape.recordsPerFamily)} records (${count(records)} records)`,
    default: isDefault,
    async run(settings: BenchSettings) {
      return withTempDir(async (directory) => {
        const fleet = buildFleet(shape, NO_CHANGES);
        const families = fleet.desired.families;
        let bytes = 0;
        for (let first = 0; first < families.length; first += PROJECTS_PER_FILE * FAMILY_NAMES.length) {
          const part = families.slice(first, first + PROJECTS_PER_FILE * FAMILY_NAMES.length);
          const yaml = familiesYaml(part);
          bytes += yaml.length;
          const name = `projects-${String(first / FAMILY_NAMES.length + 1).padStart(6, "0")}.yaml`;
          await writeFile(join(directory, name), yaml);
        }
        const validate = await validateRuns(directory, 3);
        const validateMs = median(validate.map((run) => run.wallMs));

        const emulator = await startEmulatorThread({ profile: "seed", data: takeData(fleet), faults: {} });
        try {
          await warmUp(emulator.url, shape.projects);
          await emulator.setFaults({ latencyMs: settings.latencyMs });
          const servedBefore = (await emulator.requestLog()).length;
          const plan = expectSuccess(
            await runCli(
              [
                "plan",
                "-f",
                directory,
                "-v",
                "--base-url",
                emulator.url,
                "--concurrency",
                String(settings.concurrency),
              ],
              { PCSYNC_API_KEY: BENCH_API_KEY },
            ),
            "pcsync plan",
          );
          const served = (await emulator.requestLog(servedBefore)).length;
          const minimum = fleet.familySizes.reduce(
            (total, size) => total + Math.max(1, Math.ceil(size / RECORDS_PER_LIST_REQUEST)),
            0,
          );
          const readIdeal = Math.ceil(minimum / settings.concurrency) * settings.latencyMs;
          const ideal = readIdeal + validateMs;
          // A request's trace line comes when it answers: it started its round trip earlier.
          const firstStart = lowest(plan.requests.map((request) => request.at - request.ms));
          const lastEnd = highest(plan.requests.map((request) => request.at));
          const ratio = plan.wallMs / ideal;
          const rows: Row[] = [
            {
              metric: "manifest",
              value: `${(bytes / 2 ** 20).toFixed(1)} MB in ${Math.ceil(shape.projects / PROJECTS_PER_FILE)} files`,
            },
            { metric: "requests served / minimum", value: `${count(served)} / ${count(minimum)}` },
            {
              metric: "validate of the same files, median of 3",
              value: describeRuns(validate.map((run) => run.wallMs)),
            },
            { metric: "time before the first request", value: ms(firstStart) },
            { metric: "read window (first request sent to last answer)", value: ms(lastEnd - firstStart) },
            {
              metric: `ideal read (${count(minimum)} round trips of ${settings.latencyMs} ms, ${settings.concurrency} at once)`,
              value: ms(readIdeal),
            },
            { metric: "plan wall time (spawn to exit)", value: ms(plan.wallMs) },
            {
              metric: "plan wall time / (ideal read + validate)",
              value: ratio.toFixed(2),
              target: "≤ 1.5",
              pass: ratio <= 1.5,
            },
            { metric: "plan CPU time (the CLI process)", value: ms(plan.cpuMs) },
            { metric: "plan peak RSS (the CLI process)", value: mb(plan.peakRssKb) },
          ];
          return { id, title: this.title, rows };
        } finally {
          await emulator.close();
        }
      });
    },
  };
}

export const MANIFEST_SCENARIOS: readonly Scenario[] = [
  validateScenario(),
  planFromYamlScenario({ projects: 100, recordsPerFamily: 50 }, true),
  planFromYamlScenario({ projects: 500, recordsPerFamily: 50 }, true),
];
