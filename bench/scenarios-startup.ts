// Start-up time of the built CLI as a user pays it: `pcsync --version` and `pcsync validate` of the
// examples against bare `node -e 0`, run interleaved so that the machine's load weighs on all three.

import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import type { Row, Scenario, ScenarioResult } from "./harness.js";

// From dist/bench/ once built: the built CLI and the repository's examples.
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));

const RUNS = 15;
// Unmeasured rounds first: the first runs also read the files from disk.
const WARM_UP_ROUNDS = 2;

interface Command {
  label: string;
  args: string[];
  /** The most this command may take, as a multiple of `node -e 0`. */
  targetRatio?: number;
}

const BASELINE: Command = { label: "node -e 0", args: ["-e", "0"] };
const COMMANDS: readonly Command[] = [
  BASELINE,
  { label: "pcsync --version", args: [CLI, "--version"], targetRatio: 2 },
  { label: "pcsync validate -f examples/", args: [CLI, "validate", "-f", EXAMPLES], targetRatio: 2.5 },
];

/** Wall time of one run, in ms; a run that fails stops the benchmark (it would measure an error). */
function timeRun(command: Command): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, command.args, { stdio: ["ignore", "ignore", "pipe"] });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(`${command.label} exited with ${String(result.status)}: ${String(result.stderr)}`);
  }
  return elapsed;
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

function runStartup(): ScenarioResult {
  const loadBefore = load();
  const times = new Map<Command, number[]>(COMMANDS.map((command) => [command, []]));
  for (let round = 0; round < WARM_UP_ROUNDS + RUNS; round++) {
    for (const command of COMMANDS) {
      const elapsed = timeRun(command);
      if (round >= WARM_UP_ROUNDS) times.get(command)?.push(elapsed);
    }
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
  return {
    id: "startup",
    title: `start-up: ${RUNS} interleaved runs each of node -e 0, pcsync --version, pcsync validate -f examples/`,
    rows,
  };
}

export const STARTUP_SCENARIOS: readonly Scenario[] = [
  {
    id: "startup",
    title: "start-up of the built CLI (--version, validate) against bare node",
    default: true,
    run: async () => runStartup(),
  },
];
