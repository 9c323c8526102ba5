// `pcsync watch` as an operator runs it, the built CLI against the emulator with latency: a cycle
// against one `plan` of the same fleet, how soon an out-of-band edit shows in the metric, and the
// memory after many cycles against after a few (no leak).

import { type ChildProcess, spawn } from "node:child_process";
import { utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAMILY_NAMES } from "../src/families.js";
import { BENCH_API_KEY, buildFleet, type FleetShape, NO_CHANGES, takeData } from "./dataset.js";
import { type EmulatorThread, startEmulatorThread } from "./emulator-thread.js";
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

/** One line of the Prometheus text format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface RunningWatch {
  child: ChildProcess;
  url: string;
  samples(): Promise<Sample[]>;
  /** The sum of a metric's series. */
  metric(name: string): Promise<number>;
  stop(): Promise<void>;
}

function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([\w:]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match?.[1]) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      if (label[1] !== undefined) labels[label[1]] = label[2] ?? "";
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
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
  const samples = async () => parseSamples(await (await fetch(`${url}/metrics`)).text());
  return {
    child,
    url,
    samples,
    async metric(name) {
      let sum = 0;
      for (const sample of await samples()) if (sample.name === name) sum += sample.value;
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
    await sleep(20);
  }
  return performance.now() - started;
}

const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

/** How often the drift gauges are read while edits wait to be seen (a scrape every 100 ms). */
const SCRAPE_MS = 100;

/**
 * Reads the watcher's `pcsync_drift_changes` every SCRAPE_MS while some project is awaited, and
 * tells when a project's plugin_configs gauge is first above 0 (the time the scrape was read: a
 * delay measured with it is at most SCRAPE_MS plus a scrape too long, never too short).
 */
class DriftScraper {
  readonly #watch: RunningWatch;
  readonly #awaited = new Map<string, (at: number) => void>();
  #scraping = false;

  constructor(watch: RunningWatch) {
    this.#watch = watch;
  }

  /** Projects whose plugin_configs gauge is above 0 now. */
  async drifted(): Promise<Set<string>> {
    const projects = new Set<string>();
    for (const sample of await this.#watch.samples()) {
      if (
        sample.name === "pcsync_drift_changes" &&
        sample.labels.family === "plugin_configs" &&
        sample.value > 0
      ) {
        projects.add(sample.labels.project ?? "");
      }
    }
    return projects;
  }

  /** performance.now() of the first scrape that shows drift in `project`, or undefined after timeoutMs. */
  firstDrift(project: number, timeoutMs: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#awaited.delete(String(project));
        resolve(undefined);
      }, timeoutMs);
      this.#awaited.set(String(project), (at) => {
        clearTimeout(timer);
        resolve(at);
      });
      void this.#scrape();
    });
  }

  async #scrape(): Promise<void> {
    if (this.#scraping) return;
    this.#scraping = true;
    try {
      while (this.#awaited.size > 0) {
        const drifted = await this.drifted();
        const at = performance.now();
        for (const [project, resolve] of this.#awaited) {
          if (!drifted.has(project)) continue;
          this.#awaited.delete(project);
          resolve(at);
        }
        await sleep(SCRAPE_MS);
      }
    } finally {
      this.#scraping = false;
    }
  }
}

/** An out-of-band edit: flips `enabled` of one plugin config of a project, as someone in the UI would. */
async function prepareEdit(url: string, project: number): Promise<() => Promise<number>> {
  const headers = { authorization: `Bearer ${BENCH_API_KEY}` };
  const list = (await (
    await fetch(`${url}/api/projects/${project}/plugin_configs/?limit=1000`, { headers })
  ).json()) as { results: { id: number; enabled: boolean }[] };
  const record = list.results[0];
  if (record === undefined) throw new Error(`no record to edit in project ${project}`);
  /** Sends the edit; returns performance.now() from just before it was sent. */
  return async () => {
    const sentAt = performance.now();
    const response = await fetch(`${url}/api/projects/${project}/plugin_configs/${record.id}/`, {
      method: "PATCH",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ enabled: !record.enabled }),
    });
    if (!response.ok) throw new Error(`the edit of project ${project} failed: ${response.status}`);
    return sentAt;
  };
}

interface EditTiming {
  label: string;
  /** From just before the edit was sent to the first scrape that shows it; undefined: never seen. */
  delayMs: number | undefined;
}

/**
 * The edits whose way to the metric is measured: one at a random moment of the cycles' period,
 * then, for the first, a middle and the last project of the manifest, one sent as soon as the
 * emulator has served a cycle's list of that project's plugin configs, so that the cycle reading it
 * cannot see the edit and only the next one can: the worst timing an edit can have.
 */
async function timeEdits(
  emulator: EmulatorThread,
  watch: RunningWatch,
  projects: number,
  periodMs: number,
  timeoutMs: number,
): Promise<EditTiming[]> {
  const scraper = new DriftScraper(watch);
  const randomProject = Math.max(1, Math.floor(projects / 3));
  const unluckyProjects = [...new Set([1, Math.ceil(projects / 2), projects])].filter(
    (project) => project !== randomProject,
  );
  const edits = new Map<number, () => Promise<number>>();
  for (const project of [randomProject, ...unluckyProjects]) {
    edits.set(project, await prepareEdit(emulator.url, project));
  }
  const drifted = await scraper.drifted();
  if (drifted.size > 0) throw new Error(`drift before any edit, in projects ${[...drifted].join(", ")}`);
  const send = (project: number) => (edits.get(project) as () => Promise<number>)();

  const timings: EditTiming[] = [];
  await sleep(Math.random() * periodMs);
  const sentAt = await send(randomProject);
  const seenAt = await scraper.firstDrift(randomProject, timeoutMs);
  timings.push({
    label: `edit at a random moment (project ${randomProject})`,
    delayMs: seenAt === undefined ? undefined : seenAt - sentAt,
  });

  const unlucky = await Promise.all(
    unluckyProjects.map(async (project) => {
      const served = await emulator.whenServed({
        method: "GET",
        pathPrefix: `/api/projects/${project}/plugin_configs/?`,
        status: 200,
      });
      const sentAt = await send(project);
      const lagMs = performance.timeOrigin + sentAt - served.servedAt;
      const seenAt = await scraper.firstDrift(project, timeoutMs);
      return {
        label: `edit sent ${Math.round(lagMs)} ms after a cycle read project ${project}'s list`,
        delayMs: seenAt === undefined ? undefined : seenAt - sentAt,
      };
    }),
  );
  return [...timings, ...unlucky];
}

function cycleScenario(shape: FleetShape): Scenario {
  const records = shape.projects * 2 * shape.recordsPerFamily;
  return {
    id: `watch-${shape.projects}x${shape.recordsPerFamily}`,
    title: `watch: a cycle of ${shape.projects.toLocaleString("en-US")} projects x 2 families x ${shape.recordsPerFamily} records (${records.toLocaleString("en-US")}) against one plan, and edits' way to the metric, the worst timing included`,
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

          // A long-running watcher: its own cycle time, and how soon edits show in
          // pcsync_drift_changes.
          const intervalMs = 5_000;
          const watch = await startWatch([...common, "--interval", `${intervalMs}ms`, "--jitter", "0"]);
          try {
            const meanCycleMs = async () =>
              ((await watch.metric("pcsync_cycle_duration_seconds_sum")) /
                (await watch.metric("pcsync_cycle_duration_seconds_count"))) *
              1000;
            await waitUntil(async () => (await watch.metric("pcsync_cycles_total")) >= 2, 600_000);
            const early = await meanCycleMs();
            const edits = await timeEdits(
              emulator,
              watch,
              shape.projects,
              Math.max(intervalMs, early),
              (intervalMs + early) * 3,
            );
            const cycleMs = await meanCycleMs();
            const cycles = await watch.metric("pcsync_cycle_duration_seconds_count");
            const bound = intervalMs + cycleMs;
            const delays = edits.map((edit) => edit.delayMs ?? Number.POSITIVE_INFINITY);
            const largest = delays.reduce((a, b) => Math.max(a, b), 0);
            const shown = (delay: number | undefined) =>
              delay === undefined ? `not seen in ${ms((intervalMs + early) * 3)}` : ms(delay);
            const rows: Row[] = [
              { metric: `pcsync plan, median of ${RUNS} (spawn to exit)`, value: ms(median(plans)) },
              { metric: `pcsync watch --once, median of ${RUNS} (spawn to exit)`, value: ms(median(onces)) },
              { metric: "watch --once / plan", value: ratio.toFixed(2), target: "≤ 1.2", pass: ratio <= 1.2 },
              { metric: `cycle of a running watcher (mean of its ${cycles} cycles)`, value: ms(cycleMs) },
              ...edits.map((edit) => ({
                metric: `${edit.label}: to the metric (interval ${ms(intervalMs)})`,
                value: shown(edit.delayMs),
              })),
              {
                metric: `largest of these ${edits.length} edits' delays (scraped every ${SCRAPE_MS} ms)`,
                value: Number.isFinite(largest) ? ms(largest) : "an edit never showed",
                target: `≤ interval + cycle (${ms(bound)})`,
                pass: largest <= bound,
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
