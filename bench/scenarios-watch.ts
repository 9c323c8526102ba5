// `pcsync watch` as an operator runs it, the built CLI against the emulator with latency: a cycle
// against one `plan` of the same fleet, how soon an out-of-band edit shows in the metric, and the
// memory after many cycles against after a few (no leak).

import { type ChildProcess, spawn } from "node:child_process";
import { utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAMILY_NAMES } from "../src/families.js";
import { BENCH_API_KEY, buildFleet, type FleetShape, NO_CHANGES, takeData } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Row, Scenario } from "./harness.js";
import {
  expectSuccess,
  familiesYaml,
  median,
  ms,
  runCli,
  warmUp,
  withTempDir,
} from "./scenarios-manifest.js";

const CLI = process.env.PCSYNC_BENCH_CLI ?? fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const PROJECTS_PER_FILE = 50;
const RUNS = 3;

/** Writes the fleet's manifest as files of 50 projects, dated back so that watch reads them at once. */
async function writeFleet(directory: string, shape: FleetShape) {
  const fleet = buildFleet(shape, NO_CHANGES);
  const families = fleet.desired.families;
  const past = new Date(Date.now() - 60_000);
  for (let first = 0; first < families.length; first += PROJECTS_PER_FILE * FAMILY_NAMES.length) {
    const file = join(directory, `projects-${String(first).padStart(6, "0")}.yaml`);
    await writeFile(
      file,
      familiesYaml(families.slice(first, first + PROJECTS_PER_FILE * FAMILY_NAMES.length)),
    );
    await utimes(file, past, past);
  }
  return fleet;
}

interface RunningWatch {
  child: ChildProcess;
  url: string;
  metric(name: string): Promise<number>;
  stop(): Promise<void>;
}

/** `pcsync watch` in a process of its own; resolves once it serves its endpoints. */
async function startWatch(args: readonly string[]): Promise<RunningWatch> {
  const child = spawn(process.execPath, [CLI, "watch", "--listen", "127.0.0.1:0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: process.env.PATH, NO_COLOR: "1", PCSYNC_API_KEY: BENCH_API_KEY },
  });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const match = /serving .* on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.on("exit", () => reject(new Error(`pcsync watch exited:\n${stderr}`)));
  });
  return {
    child,
    url,
    async metric(name) {
      const text = await (await fetch(`${url}/metrics`)).text();
      let sum = 0;
      for (const line of text.split("\n")) {
        const match = /^([\w:]+)(?:\{[^}]*\})? (\S+)$/.exec(line);
        if (match?.[1] === name) sum += Number(match[2]);
      }
      return sum;
    },
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > timeoutMs) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

function cycleScenario(shape: FleetShape): Scenario {
  const records = shape.projects * 2 * shape.recordsPerFamily;
  return {
    id: `watch-${shape.projects}x${shape.recordsPerFamily}`,
    title: `watch: a cycle of ${shape.projects.toLocaleString("en-US")} projects x 2 families x ${shape.recordsPerFamily} records (${records.toLocaleString("en-US")}) against one plan, and an edit's way to the metric`,
    default: false,
    async run(settings: BenchSettings) {
      return withTempDir(async (directory) => {
        const fleet = await writeFleet(directory, shape);
        const emulator = await startEmulatorThread({ profile: "seed", data: takeData(fleet), faults: {} });
        try {
          await warmUp(emulator.url, shape.projects);
          await emulator.setFaults({ latencyMs: settings.latencyMs });
          const common = [
            "-f",
            directory,
            "--base-url",
            emulator.url,
            "--concurrency",
            String(settings.concurrency),
          ];
          const env = { PCSYNC_API_KEY: BENCH_API_KEY };
          const plans: number[] = [];
          const onces: number[] = [];
          // Interleaved, so that a busy moment of the machine hits both alike.
          for (let run = 0; run < RUNS; run++) {
            plans.push(expectSuccess(await runCli(["plan", ...common], env), "pcsync plan").wallMs);
            onces.push(
              expectSuccess(await runCli(["watch", "--once", ...common], env), "pcsync watch --once").wallMs,
            );
          }
          const ratio = median(onces) / median(plans);

          // A long-running watcher: its own cycle time, and how soon an edit made at a random moment
          // shows in pcsync_drift_changes.
          const intervalMs = 5_000;
          const watch = await startWatch([...common, "--interval", `${intervalMs}ms`, "--jitter", "0"]);
          try {
            await waitUntil(async () => (await watch.metric("pcsync_cycles_total")) >= 2, 600_000);
            const cycleMs =
              ((await watch.metric("pcsync_cycle_duration_seconds_sum")) /
                (await watch.metric("pcsync_cycle_duration_seconds_count"))) *
              1000;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * intervalMs));
            const project = Math.ceil(shape.projects / 2);
            const list = (await (
              await fetch(`${emulator.url}/api/projects/${project}/plugin_configs/?limit=1000`, {
                headers: { authorization: `Bearer ${BENCH_API_KEY}` },
              })
            ).json()) as { results: { id: number; enabled: boolean }[] };
            const record = list.results[0];
            if (record === undefined) throw new Error("no record to edit");
            await fetch(`${emulator.url}/api/projects/${project}/plugin_configs/${record.id}/`, {
              method: "PATCH",
              headers: { authorization: `Bearer ${BENCH_API_KEY}`, "content-type": "application/json" },
              body: JSON.stringify({ enabled: !record.enabled }),
            });
            const seenMs = await waitUntil(
              async () => (await watch.metric("pcsync_drift_changes")) > 0,
              intervalMs * 3 + cycleMs * 3,
            );
            const bound = intervalMs + cycleMs;
            const rows: Row[] = [
              { metric: `pcsync plan, median of ${RUNS} (spawn to exit)`, value: ms(median(plans)) },
              { metric: `pcsync watch --once, median of ${RUNS} (spawn to exit)`, value: ms(median(onces)) },
              { metric: "watch --once / plan", value: ratio.toFixed(2), target: "≤ 1.2", pass: ratio <= 1.2 },
              { metric: "cycle of a running watcher (mean of its cycles)", value: ms(cycleMs) },
              {
                metric: `out-of-band edit to the metric (interval ${ms(intervalMs)})`,
                value: ms(seenMs),
                target: `≤ interval + cycle (${ms(bound)})`,
                pass: seenMs <= bound,
              },
            ];
            return { id: this.id, title: this.title, rows };
          } finally {
            await watch.stop();
          }
        } finally {
          await emulator.close();
        }
      });
    },
  };
}

function memoryScenario(shape: FleetShape, cycles: number): Scenario {
  return {
    id: "watch-rss",
    title: `watch: resident memory after ${cycles} cycles against after 10 (${shape.projects} projects x 2 families x ${shape.recordsPerFamily} records, interval 100ms)`,
    default: false,
    async run(settings: BenchSettings) {
      return withTempDir(async (directory) => {
        const fleet = await writeFleet(directory, shape);
        const emulator = await startEmulatorThread({ profile: "seed", data: takeData(fleet), faults: {} });
        try {
          await emulator.setFaults({ latencyMs: settings.latencyMs });
          const watch = await startWatch([
            ...["-f", directory, "--base-url", emulator.url, "--interval", "100ms", "--jitter", "0"],
          ]);
          try {
            const after = async (count: number) => {
              await waitUntil(async () => (await watch.metric("pcsync_cycles_total")) >= count, 3_600_000);
              return await watch.metric("process_resident_memory_bytes");
            };
            const early = await after(10);
            const started = performance.now();
            const late = await after(cycles);
            const growth = late / early;
            const rows: Row[] = [
              { metric: "RSS after 10 cycles", value: `${(early / 2 ** 20).toFixed(1)} MB` },
              { metric: `RSS after ${cycles} cycles`, value: `${(late / 2 ** 20).toFixed(1)} MB` },
              {
                metric: `RSS after ${cycles} / after 10`,
                value: growth.toFixed(3),
                target: "≤ 1.10",
                pass: growth <= 1.1,
              },
              { metric: `time for cycles 11 to ${cycles}`, value: ms(performance.now() - started) },
            ];
            return { id: this.id, title: this.title, rows };
          } finally {
            await watch.stop();
          }
        } finally {
          await emulator.close();
        }
      });
    },
  };
}

/** PCSYNC_BENCH_WATCH_PROJECTS scales the cycle scenario down on a busy machine (default 1,000). */
const CYCLE_PROJECTS = Number(process.env.PCSYNC_BENCH_WATCH_PROJECTS ?? "1000");

export const WATCH_SCENARIOS: readonly Scenario[] = [
  cycleScenario({ projects: CYCLE_PROJECTS, recordsPerFamily: 20 }),
  memoryScenario({ projects: 20, recordsPerFamily: 20 }, 200),
];
