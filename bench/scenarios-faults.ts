// Apply time under the README's fault rates, at the CLI's real defaults: the built CLI applies a
// dozen creates, then a dozen updates, against an emulator (in a worker thread) answering 15% of
// requests with 503, 10% with 429 (its 1 s wait) and committing 5% of writes without answering,
// on both profiles and a few seeds. None of these failures calls for a proof window (75 s), so an
// apply should take seconds.

import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PROFILE_NAMES } from "../src/emulator/index.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { Row, Scenario, ScenarioResult } from "./harness.js";

// From dist/bench/ once built: the built CLI.
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const API_KEY = "phx_bench_faults";
const SEEDS = [11, 22, 33];
const CHANGES = 12;
/** One proof window at the defaults (2.5 × the 30 s timeout): no apply here should wait for one. */
const PROOF_WINDOW_MS = 75_000;
/** What "seconds, not a minute" means for a dozen changes. */
const MEDIAN_TARGET_MS = 15_000;

function manifest(enabled: boolean): string {
  const configs = Array.from(
    { length: CHANGES },
    (_, index) =>
      `        - name: Faulty ${index + 1}\n          plugin: ${(index % 8) + 1}\n          order: ${index + 10}\n          enabled: ${enabled}\n`,
  ).join("");
  return `version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n${configs}`;
}

/** Wall time of one `pcsync apply`; a run that does not converge stops the benchmark. */
function timedApply(file: string, baseUrl: string, cwd: string): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [CLI, "apply", "--auto-approve", "--max-update-percent", "100", "-f", file, "--base-url", baseUrl],
      {
        cwd,
        env: { PATH: process.env.PATH ?? "", PCSYNC_API_KEY: API_KEY, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      if (code === 0) resolve(wall);
      else reject(new Error(`pcsync apply exited with ${String(code)}:\n${output.slice(-2000)}`));
    });
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function runFaults(): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const directory = await mkdtemp(join(tmpdir(), "pcsync-bench-faults-"));
  try {
    const creates = join(directory, "creates.yaml");
    const updates = join(directory, "updates.yaml");
    await writeFile(creates, manifest(true));
    await writeFile(updates, manifest(false));
    for (const profile of PROFILE_NAMES) {
      const times: number[] = [];
      let faults = 0;
      let requests = 0;
      for (const seed of SEEDS) {
        const emulator = await startEmulatorThread({
          profile,
          keys: [{ key: API_KEY, scopes: null, projects: "*" }],
        });
        try {
          await emulator.setFaults({ fail503Rate: 0.15, fail429Rate: 0.1, dropWriteRate: 0.05, seed });
          times.push(await timedApply(creates, emulator.url, directory));
          times.push(await timedApply(updates, emulator.url, directory));
          const log = await emulator.requestLog();
          requests += log.length;
          faults += log.filter((entry) => [0, 429, 503].includes(entry.status)).length;
        } finally {
          await emulator.close();
        }
      }
      const sorted = [...times].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
      const worst = sorted.at(-1) ?? Number.NaN;
      rows.push(
        {
          metric: `${profile}: apply of ${CHANGES} changes, median (${times.length} applies)`,
          value: seconds(median),
          target: `< ${seconds(MEDIAN_TARGET_MS)}`,
          pass: median < MEDIAN_TARGET_MS,
        },
        {
          metric: `${profile}: slowest apply (each: ${times.map(seconds).join(", ")})`,
          value: seconds(worst),
          target: `< ${seconds(PROOF_WINDOW_MS)} (one proof window)`,
          pass: worst < PROOF_WINDOW_MS,
        },
        { metric: `${profile}: requests served / failed by a fault`, value: `${requests} / ${faults}` },
      );
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
  return {
    id: "apply-under-faults",
    title: "apply of a dozen changes under 15% 503, 10% 429, 5% writes committed unanswered (CLI defaults)",
    rows,
  };
}

export const FAULT_SCENARIOS: readonly Scenario[] = [
  {
    id: "apply-under-faults",
    title: "apply a dozen changes under the README's fault rates at the CLI's defaults, both profiles",
    default: true,
    run: runFaults,
  },
];
