// What every benchmark scenario shares: the scenario and row types, figure formatting, and the
// harness that starts the emulator with a fleet and a client against it.

import { ApiClient } from "../src/api/index.js";
import type { FaultOptions, ProfileName } from "../src/emulator/index.js";
import type { CurrentState, Plan } from "../src/plan/types.js";
import { readAndPlanProjects } from "../src/read/read-and-plan.js";
import { BENCH_API_KEY, type ChangeMix, type Fleet, takeData } from "./dataset.js";
import { type EmulatorThread, startEmulatorThread } from "./emulator-thread.js";

export interface BenchSettings {
  latencyMs: number;
  concurrency: number;
}

export interface Row {
  metric: string;
  value: string;
  target?: string;
  /** Whether the target is met; absent when the row has no target. */
  pass?: boolean;
}

export interface ScenarioResult {
  id: string;
  title: string;
  rows: Row[];
}

export interface Scenario {
  id: string;
  /** One line for --help and the table title. */
  title: string;
  /** Run by `npm run bench` without --scenario. */
  default: boolean;
  run(settings: BenchSettings): Promise<ScenarioResult>;
}

export const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`;
export const count = (value: number) => value.toLocaleString("en-US");
export const ratio = (value: number) => value.toFixed(2);
export const percent = (value: number) => `${(value * 100).toFixed(2)} %`;

/** Peak resident set size of this process so far (each scenario runs in a process of its own). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Rounds of `concurrency` round trips of `latencyMs` each: the wall time if only latency counted. */
export function idealWallMs(requests: number, settings: BenchSettings): number {
  return Math.ceil(requests / settings.concurrency) * settings.latencyMs;
}

/** One response as the client saw it: when, which status, and how long the attempt took. */
export interface ResponseTime {
  at: number;
  status: number;
  ms: number;
}

export interface Harness {
  emulator: EmulatorThread;
  client: ApiClient;
  /** Every response so far, in arrival order. */
  responses: ResponseTime[];
  /** Requests the emulator served before the scenario began (its warm-up). */
  servedBefore: number;
}

/**
 * Lists every family once with plain `fetch` before the measured run, without latency: a real
 * service is warm, and the emulator's JIT warm-up would otherwise be counted as the client's time.
 * The client under test stays cold.
 */
async function warmUpEmulator(url: string, projects: number): Promise<void> {
  let next = 0;
  const requests = Math.min(2_000, projects * 2);
  const worker = async () => {
    while (next < requests) {
      const index = next++;
      const family = index % 2 === 0 ? "plugin_configs" : "pipeline_frontend_apps_configs";
      const project = Math.floor(index / 2) + 1;
      const response = await fetch(`${url}/api/projects/${project}/${family}/?limit=1000`, {
        headers: { authorization: `Bearer ${BENCH_API_KEY}` },
      });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

export async function withFleet<T>(
  fleet: Fleet,
  options: {
    profile: ProfileName;
    settings: BenchSettings;
    perMinute?: number;
    warmUp?: boolean;
    /** Persist the emulator's state in this file (`pcsync serve --data`). */
    dataFile?: string;
    client?: Partial<ConstructorParameters<typeof ApiClient>[0]>;
  },
  body: (harness: Harness) => Promise<T>,
): Promise<T> {
  const faults: FaultOptions = {
    latencyMs: options.settings.latencyMs,
    // The real service's hourly limit is ten times its per-minute one.
    ...(options.perMinute === undefined
      ? {}
      : { rateLimit: { perMinute: options.perMinute, perHour: options.perMinute * 10 } }),
  };
  const projects = fleet.shape.projects;
  const emulator = await startEmulatorThread({
    profile: options.profile,
    data: takeData(fleet),
    faults: options.warmUp ? {} : faults,
    ...(options.dataFile === undefined ? {} : { dataFile: options.dataFile }),
  });
  if (options.warmUp) {
    await warmUpEmulator(emulator.url, projects);
    await emulator.setFaults(faults);
  }
  const servedBefore = (await emulator.requestLog()).length;
  // Set-up garbage (the fleet handed over, the warm-up) is not the client's memory.
  (globalThis as { gc?: () => void }).gc?.();
  const responses: ResponseTime[] = [];
  // The trace is the client's one line per attempt: "GET /path -> 200 (23 ms, 512 bytes)".
  const trace = (line: string) => {
    const match = / -> (\d{3}) \((\d+) ms/.exec(line);
    if (match) responses.push({ at: performance.now(), status: Number(match[1]), ms: Number(match[2]) });
  };
  const client = new ApiClient({
    baseUrl: emulator.url,
    apiKey: BENCH_API_KEY,
    concurrency: options.settings.concurrency,
    trace,
    ...options.client,
  });
  try {
    return await body({ emulator, client, responses, servedBefore });
  } finally {
    await client.close();
    await emulator.close();
  }
}

/** Samples this process's RSS and the main thread's heap while a phase runs. */
export function trackMemory(): { stop(): { rssMb: number; heapMb: number } } {
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const usage = process.memoryUsage();
    rss = Math.max(rss, usage.rss);
    heap = Math.max(heap, usage.heapUsed);
  };
  sample();
  const timer = setInterval(sample, 10);
  return {
    stop() {
      sample();
      clearInterval(timer);
      return { rssMb: rss / 2 ** 20, heapMb: heap / 2 ** 20 };
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

export interface PlanRun {
  plan: Plan;
  current: CurrentState;
  /** Wall time of reading and planning, pipelined as the CLI does (projects planned as they arrive). */
  wallMs: number;
  /** Time in the synchronous, pure planning (main thread), overlapped with the reads. */
  planningMs: number;
}

export async function timeReadAndPlan(
  client: ApiClient,
  fleet: Fleet,
  settings: BenchSettings,
): Promise<PlanRun> {
  const started = performance.now();
  const { plan, errors, current, planningMs } = await readAndPlanProjects(client, fleet.desired, {
    concurrency: settings.concurrency,
  });
  const wallMs = performance.now() - started;
  if (!plan) throw new Error(`the benchmark's plan failed: ${errors[0]?.message ?? "?"}`);
  return { plan, current, wallMs, planningMs };
}

/** The fleet and changes of `apply-10000`. */
export const APPLY_10000 = {
  shape: { projects: 100, recordsPerFamily: 50 },
  mix: { updates: 30, deletes: 10, creates: 10, createsAt: "start" } satisfies ChangeMix,
};
