// Benchmark of `export --all` over a fleet whose projects share their configs: the CLI run
// in-process against the emulator (a worker thread, with latency). Figures: wall time, requests,
// and the bytes written with and without --templates.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { runCli } from "../src/cli/program.js";
import { type EmulatorData, exampleData, type StoredRecord } from "../src/emulator/index.js";
import { BENCH_API_KEY } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Scenario, ScenarioResult } from "./scenarios.js";

const SHARED_CONFIGS = 10;
const OWN_CONFIGS = 2;
const TIMESTAMP = "2024-06-01T12:00:00.000Z";
// The client's page size: one request reads up to this many projects.
const PROJECTS_PER_PAGE = 1000;

/** Every project: the same 10 plugin configs and 2 frontend apps, then 2 configs of its own. */
function fleetData(projects: number): EmulatorData {
  const data = exampleData();
  data.projects = Array.from({ length: projects }, (_, index) => ({
    id: index + 1,
    name: `Project ${index + 1}`,
  }));
  data.keys = [{ key: BENCH_API_KEY, scopes: null, projects: "*", label: "benchmark" }];
  data.logEntries = [];
  const records: StoredRecord[] = [];
  let id = 1;
  const add = (
    fields: Pick<StoredRecord, "project" | "family" | "plugin" | "order" | "name"> & Partial<StoredRecord>,
  ) =>
    records.push({
      id: id++,
      enabled: true,
      description: null,
      deleted: false,
      match_action: null,
      config: "{}",
      error: null,
      delivery_rate_24h: null,
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      ...fields,
    });
  for (let project = 1; project <= projects; project++) {
    for (let index = 0; index < SHARED_CONFIGS; index++) {
      add({
        project,
        family: "plugin_configs",
        plugin: (index % 8) + 1,
        order: index + 1,
        name: `Shared step ${index + 1}`,
        enabled: index % 2 === 0,
        description: index % 3 === 0 ? "Set by the data team" : null,
      });
    }
    for (let index = 0; index < OWN_CONFIGS; index++) {
      const order = SHARED_CONFIGS + index + 1;
      add({
        project,
        family: "plugin_configs",
        plugin: 5,
        order,
        name: `Project ${project} export ${index + 1}`,
      });
    }
    add({
      project,
      family: "pipeline_frontend_apps_configs",
      plugin: 40,
      order: 1,
      name: "Notification Bar",
    });
    add({ project, family: "pipeline_frontend_apps_configs", plugin: 41, order: 2, name: "Pineapple Mode" });
  }
  data.records = records;
  data.nextIds = { record: id };
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
    title: `export --all (--templates) of ${projects} projects sharing ${SHARED_CONFIGS} configs, ${OWN_CONFIGS} own each`,
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
