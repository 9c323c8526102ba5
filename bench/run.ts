// `npm run bench`: runs each scenario in a fresh child process (so peak RSS is the scenario's own)
// and prints one table per scenario, with the machine it ran on.

import { fork } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { BenchSettings, Row, Scenario, ScenarioResult } from "./harness.js";
import { SCENARIOS } from "./scenarios.js";

const USAGE = `Usage: npm run bench -- [--scenario ID[,ID...]|default|all] [--latency MS] [--concurrency N]

Scenarios (default: those marked *):
${SCENARIOS.map((scenario) => `  ${scenario.default ? "*" : " "} ${scenario.id.padEnd(16)} ${scenario.title}`).join("\n")}

--latency MS      latency the emulator adds to every response (default 20)
--concurrency N   requests in flight at most (default 8, the CLI's default)`;

/** A bad command line: reported without a stack trace. */
class BenchUsageError extends Error {}

function parseSettings(values: { latency?: string; concurrency?: string }): BenchSettings {
  const latencyMs = Number(values.latency ?? "20");
  const concurrency = Number(values.concurrency ?? "8");
  if (!Number.isFinite(latencyMs) || latencyMs < 0)
    throw new BenchUsageError("--latency must be a number of ms ≥ 0");
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new BenchUsageError("--concurrency must be ≥ 1");
  return { latencyMs, concurrency };
}

function selectScenarios(names: string | undefined): Scenario[] {
  if (names === undefined || names === "default") return SCENARIOS.filter((scenario) => scenario.default);
  if (names === "all") return [...SCENARIOS];
  return names.split(",").map((name) => {
    const scenario = SCENARIOS.find((candidate) => candidate.id === name.trim());
    if (!scenario) throw new BenchUsageError(`unknown scenario "${name}"\n\n${USAGE}`);
    return scenario;
  });
}

function renderTable(result: ScenarioResult): string {
  const header = ["metric", "value", "target", ""];
  const cells = result.rows.map((row: Row) => [
    row.metric,
    row.value,
    row.target ?? "",
    row.pass === undefined ? "" : row.pass ? "ok" : "MISSED",
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...cells.map((line) => (line[column] ?? "").length)),
  );
  const line = (values: string[]) =>
    `| ${values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [
    `### ${result.id}: ${result.title}`,
    "",
    line(header),
    `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`,
    ...cells.map(line),
    "",
  ].join("\n");
}

function describeMachine(settings: BenchSettings): string {
  const cores = cpus();
  return [
    `Machine: ${cores.length} cores (${cores[0]?.model.trim() ?? "unknown CPU"}), ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM, ${process.platform}/${process.arch}`,
    `Node ${process.version}; emulator in-process (worker thread) with ${settings.latencyMs} ms added latency; client concurrency ${settings.concurrency}`,
    `Load average at start: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")} (other work on the machine slows the wall times)`,
    "",
  ].join("\n");
}

/** Runs one scenario in a child process and returns what it reports. */
function runInChild(scenario: Scenario, settings: BenchSettings): Promise<ScenarioResult> {
  return new Promise((resolve, reject) => {
    const script = process.argv[1];
    if (script === undefined) {
      reject(new Error("cannot find the benchmark script to run it again"));
      return;
    }
    const child = fork(
      script,
      [
        "--child",
        scenario.id,
        "--latency",
        String(settings.latencyMs),
        "--concurrency",
        String(settings.concurrency),
      ],
      {
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        // Lets a scenario drop its set-up garbage before it measures memory.
        execArgv: [...process.execArgv, "--expose-gc"],
      },
    );
    let result: ScenarioResult | undefined;
    child.on("message", (message) => {
      result = message as ScenarioResult;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (result && code === 0) resolve(result);
      else reject(new Error(`scenario ${scenario.id} failed (exit code ${code})`));
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string" },
      latency: { type: "string" },
      concurrency: { type: "string" },
      child: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const settings = parseSettings(values);
  if (values.child !== undefined) {
    const [scenario] = selectScenarios(values.child);
    if (!scenario) throw new Error("no scenario given");
    const result = await scenario.run(settings);
    process.send?.(result);
    return;
  }

  const scenarios = selectScenarios(values.scenario);
  process.stdout.write(`${describeMachine(settings)}\n`);
  let missed = 0;
  for (const scenario of scenarios) {
    process.stderr.write(`running ${scenario.id}...\n`);
    const result = await runInChild(scenario, settings);
    missed += result.rows.filter((row) => row.pass === false).length;
    process.stdout.write(`${renderTable(result)}\n`);
  }
  if (missed > 0) {
    process.stdout.write(`${missed} target(s) missed.\n`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  const shown =
    error instanceof BenchUsageError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`${shown}\n`);
  process.exitCode = 1;
});
