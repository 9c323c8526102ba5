// Start-up time of the built CLI as a user pays it: `pcsync --version`, `pcsync validate` of the
// examples and `pcsync plan` of them against a local emulator (in a worker thread, on port 0),
// against bare `node -e 0`, run interleaved so that the machine's load weighs on all of them.

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startEmulatorThread } from "./emulator-thread.js";
import type { Row, Scenario, ScenarioResult } from "./harness.js";

// From dist/bench/ once built: the package's bin (the bundle a user runs) and the repository's examples.
const CLI = fileURLToPath(new URL("../bundle/pcsync.mjs", import.meta.url));
const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));

const RUNS = 15;
// Unmeasured rounds first: the first runs also read the files from disk.
const WARM_UP_ROUNDS = 2;

interface Command {
  label: string;
  args: string[];
  /** The most this command may take, as a multiple of `node -e 0`. */
  targetRatio?: number;
  /** Needs the emulator: the connection is given in the environment. */
  connects?: boolean;
}

const API_KEY = "phx_bench_startup";

const BASELINE: Command = { label: "node -e 0", args: ["-e", "0"] };
const COMMANDS: readonly Command[] = [
  BASELINE,
  { label: "pcsync --version", args: [CLI, "--version"], targetRatio: 2 },
  { label: "pcsync validate -f examples/", args: [CLI, "validate", "-f", EXAMPLES], targetRatio: 2.5 },
  { label: "pcsync plan -f examples/", args: [CLI, "plan", "-f", EXAMPLES], targetRatio: 4, connects: true },
  {
    label: "pcsync plan -f examples/pcsync.yaml",
    args: [CLI, "plan", "-f", `${EXAMPLES}pcsync.yaml`],
    targetRatio: 3.5,
    connects: true,
  },
];

/**
 * The CPU time (user + system, ms) of this process's waited-for children so far, from
 * /proc/self/stat (Linux; in clock ticks of 10 ms); undefined elsewhere. Unlike wall time, a busy
 * machine hardly changes it.
 */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name, which may hold spaces: cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

/** Wall and CPU time of one run, in ms; a run that fails stops the benchmark (it would measure an error). */
function timeRun(command: Command, baseUrl: string): { wall: number; cpu: number | undefined } {
  const env = command.connects
    ? { ...process.env, PCSYNC_BASE_URL: baseUrl, PCSYNC_API_KEY: API_KEY }
    : process.env;
  const cpuBefore = childrenCpuMs();
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, command.args, { stdio: ["ignore", "ignore", "pipe"], env });
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuAfter = childrenCpuMs();
  if (result.status !== 0) {
    throw new Error(`${command.label} exited with ${String(result.status)}: ${String(result.stderr)}`);
  }
  return { wall, cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))] ?? Number.NaN;
}

function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

const ms = (value: number) => `${Math.round(value)} ms`;
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

async function runStartup(): Promise<ScenarioResult> {
  const loadBefore = load();
  const times = new Map<Command, number[]>(COMMANDS.map((command) => [command, []]));
  const cpuTimes = new Map<Command, number[]>(COMMANDS.map((command) => [command, []]));
  // The example data, as `pcsync serve` and the demo start with; its thread serves while this one
  // waits on each run.
  const emulator = await startEmulatorThread({ keys: [{ key: API_KEY, scopes: null, projects: "*" }] });
  try {
    for (let round = 0; round < WARM_UP_ROUNDS + RUNS; round++) {
      for (const command of COMMANDS) {
        const { wall, cpu } = timeRun(command, emulator.url);
        if (round < WARM_UP_ROUNDS) continue;
        times.get(command)?.push(wall);
        if (cpu !== undefined) cpuTimes.get(command)?.push(cpu);
      }
    }
  } finally {
    await emulator.close();
  }
  const baseline = times.get(BASELINE) ?? [];
  const baselineMedian = quantile(sortedCopy(baseline), 0.5);
  const rows: Row[] = [{ metric: "load average before / after", value: `${loadBefore} / ${load()}` }];
  for (const command of COMMANDS) {
    const runs = times.get(command) ?? [];
    const sorted = sortedCopy(runs);
    rows.push({
      metric: `${command.label}: median (p10-p90, min-max)`,
      value: `${ms(quantile(sorted, 0.5))} (${ms(quantile(sorted, 0.1))}-${ms(quantile(sorted, 0.9))}, ${ms(sorted[0] ?? Number.NaN)}-${ms(sorted.at(-1) ?? Number.NaN)})`,
    });
    if (command.targetRatio === undefined) continue;
    const ratio = quantile(sorted, 0.5) / baselineMedian;
    // The same round's runs met the same load: their ratios show how much of the spread is the machine.
    const perRound = sortedCopy(runs.map((elapsed, index) => elapsed / (baseline[index] ?? Number.NaN)));
    rows.push({
      metric: `${command.label} / node -e 0 (median; per round p10-p90)`,
      value: `${ratio.toFixed(2)} (${quantile(perRound, 0.1).toFixed(2)}-${quantile(perRound, 0.9).toFixed(2)})`,
      target: `<= ${command.targetRatio.toFixed(1)}`,
      pass: ratio <= command.targetRatio,
    });
  }
  // CPU time per run (mean: ticks are 10 ms), which the machine's load hardly changes.
  const meanCpu = (command: Command) => {
    const runs = cpuTimes.get(command) ?? [];
    return runs.length === 0 ? Number.NaN : runs.reduce((sum, value) => sum + value, 0) / runs.length;
  };
  if (!Number.isNaN(meanCpu(BASELINE))) {
    rows.push({
      metric: "CPU time per run, mean (x node -e 0)",
      value: COMMANDS.map(
        (command) =>
          `${command.label.replace(/ -f examples\/$/, "")} ${ms(meanCpu(command))}${command === BASELINE ? "" : ` (${(meanCpu(command) / meanCpu(BASELINE)).toFixed(2)})`}`,
      ).join("; "),
    });
  }
  // What plan adds to the program's own start: its modules, the manifest and one request per family.
  const version = COMMANDS.find((command) => command.args.includes("--version"));
  const plan = COMMANDS.find((command) => command.args.includes("plan"));
  if (version && plan) {
    const median = (command: Command) => quantile(sortedCopy(times.get(command) ?? []), 0.5);
    rows.push({
      metric: "pcsync plan / pcsync --version (wall median; CPU mean)",
      value: `${(median(plan) / median(version)).toFixed(2)}; ${(meanCpu(plan) / meanCpu(version)).toFixed(2)}`,
    });
  }
  return {
    id: "startup",
    title: `start-up: ${RUNS} interleaved runs each of ${COMMANDS.map((command) => command.label).join(", ")}`,
    rows,
  };
}

export const STARTUP_SCENARIOS: readonly Scenario[] = [
  {
    id: "startup",
    title: "start-up of the built CLI (--version, validate, plan against a local emulator) against bare node",
    default: true,
    run: runStartup,
  },
];
