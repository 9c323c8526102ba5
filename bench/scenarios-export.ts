// Benchmark of `export --all` over a fleet whose projects share their configs: the CLI run
// in-process against the emulator (a worker thread, with latency). Figures: wall time, requests,
// and the bytes written with and without --templates.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { runCli } from "../src/cli/program.js";
import type { EmulatorData } from "../src/emulator/index.js";
import { BENCH_API_KEY, buildFleet, takeData } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Scenario, ScenarioResult } from "./harness.js";

const SHARED_CONFIGS = 10;
const OWN_CONFIGS = 2;
// The client's page size: one request reads up to this many projects.
const PROJECTS_PER_PAGE = 1000;

/**
 * The benchmark fleet (see dataset.ts) with the first 10 plugin configs and every frontend app
 * renamed alike in each project: then shared, while the last 2 plugin configs stay each project's.
 */
function fleetData(projects: number): EmulatorData {
  const data = takeData(buildFleet({ projects, recordsPerFamily: SHARED_CONFIGS + OWN_CONFIGS }));
  for (const record of data.records) {
    if (record.family === "plugin_configs" && record.order > SHARED_CONFIGS) continue;
    record.name = `Shared ${record.family === "plugin_configs" ? "step" : "app"} ${record.order}`;
    if (record.order % 3 === 0) record.description = "Set by the data team";
  }
  return data;
}

/** Runs `pcsync ARGS` in this process; its stdout is dropped, its stderr returned. */
async function runExport(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const sink = (keep: boolean) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (keep) stderr += chunk.toString("utf8");
        done();
      },
    });
  const code = await runCli(args, { stdout: sink(false), stderr: sink(true), env, cwd: process.cwd() });
  return { code, stderr };
}

function exportScenario(projects: number): Scenario {
  return {
    id: `export-${projects}`,
    title: `export --all (--templates) of ${projects} projects x 2 families x ${SHARED_CONFIGS + OWN_CONFIGS} records, all shared but ${OWN_CONFIGS} plugin configs each`,
    default: true,
    async run(settings: BenchSettings): Promise<ScenarioResult> {
      const emulator = await startEmulatorThread({
        profile: "seed",
        data: fleetData(projects),
        faults: { latencyMs: settings.latencyMs },
      });
      const directory = await mkdtemp(join(tmpdir(), "pcsync-bench-export-"));
      try {
        const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: BENCH_API_KEY, NO_COLOR: "1" };
        const connection = ["--concurrency", String(settings.concurrency)];
        const templatedFile = join(directory, "fleet.yaml");
        const writtenOutFile = join(directory, "all.yaml");
        const servedBefore = (await emulator.requestLog()).length;
        const started = performance.now();
        const templated = await runExport(
          ["export", "--all", "--templates", "-o", templatedFile, ...connection],
          env,
        );
        const wallMs = performance.now() - started;
        const requests = (await emulator.requestLog()).length - servedBefore;
        const writtenOut = await runExport(["export", "--all", "-o", writtenOutFile, ...connection], env);
        if (templated.code !== 0 || writtenOut.code !== 0) {
          throw new Error(`export failed: ${templated.stderr}${writtenOut.stderr}`);
        }
        const templatedBytes = Buffer.byteLength(await readFile(templatedFile));
        const writtenOutBytes = Buffer.byteLength(await readFile(writtenOutFile));
        const minimum = Math.ceil(projects / PROJECTS_PER_PAGE) + projects * 2;
        const share = templatedBytes / writtenOutBytes;
        return {
          id: `export-${projects}`,
          title: this.title,
          rows: [
            {
              metric: "wall time (export --all --templates)",
              value: `${Math.round(wallMs).toLocaleString("en-US")} ms`,
            },
            { metric: "requests made / minimum", value: `${requests} / ${minimum}` },
            { metric: "templates written", value: /\((\d+) templates?\)/.exec(templated.stderr)?.[1] ?? "?" },
            { metric: "bytes written out", value: writtenOutBytes.toLocaleString("en-US") },
            { metric: "bytes with --templates", value: templatedBytes.toLocaleString("en-US") },
            {
              metric: "with --templates / written out",
              value: share.toFixed(3),
              target: "≤ 0.333",
              pass: share <= 1 / 3,
            },
          ],
        };
      } finally {
        await rm(directory, { recursive: true, force: true });
        await emulator.close();
      }
    },
  };
}

export const EXPORT_SCENARIOS: readonly Scenario[] = [exportScenario(200)];
