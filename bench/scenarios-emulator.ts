// The emulator at scale: loading 200,000 records from a data file, and an apply against
// `pcsync serve --data` (group commit) beside the same apply against the in-memory emulator.

import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPlan } from "../src/apply/apply-plan.js";
import { BENCH_API_KEY, buildFleet, takeData } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import {
  APPLY_10000,
  type BenchSettings,
  count,
  ms,
  type Row,
  ratio,
  type Scenario,
  timeReadAndPlan,
  trackMemory,
  withFleet,
} from "./harness.js";

// Titles are literals: this module is evaluated before scenarios.ts finishes (they import each other).
const LOAD_SHAPE = { projects: 2_000, recordsPerFamily: 50 };

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

async function inTemporaryDirectory<T>(body: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), "pcsync-bench-"));
  try {
    return await body(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Times a start of the emulator on `file`, and the process's peak RSS meanwhile. */
async function timeStart(file: string) {
  const memory = trackMemory();
  const started = performance.now();
  const emulator = await startEmulatorThread({ dataFile: file });
  const startMs = performance.now() - started;
  return { emulator, startMs, rssMb: memory.stop().rssMb };
}

/** `writes` PATCHes, `concurrency` at once, without added latency: the mean round trip. */
async function timeWrites(url: string, writes: number, concurrency: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < writes) {
      const index = next++;
      const response = await fetch(`${url}/api/projects/1/plugin_configs/${10_001 + (index % 50)}/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${BENCH_API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ description: `write ${index}` }),
      });
      if (response.status !== 200) throw new Error(`PATCH answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ((performance.now() - started) / writes) * concurrency;
}

const loadScenario: Scenario = {
  id: "emulator-load-200000",
  title: "emulator: start on a data file of 200,000 records (2,000 projects x 2 families x 50), then writes",
  default: true,
  run(settings: BenchSettings) {
    return inTemporaryDirectory(async (directory) => {
      const file = join(directory, "state.json");
      const fleet = buildFleet(LOAD_SHAPE);
      const records = fleet.shape.projects * 2 * fleet.shape.recordsPerFamily;
      // A hand-made file: the same layout the emulator writes, without its snapshot id.
      await writeFile(file, `${JSON.stringify(takeData(fleet), null, 2)}\n`);
      const fileBytes = (await stat(file)).size;
      collectGarbage();
      const baselineMb = process.memoryUsage().rss / 2 ** 20;

      const first = await timeStart(file);
      const writeMs = await timeWrites(first.emulator.url, 400, settings.concurrency);
      const closing = performance.now();
      await first.emulator.close();
      const closeMs = performance.now() - closing;
      collectGarbage();
      const again = await timeStart(file);
      await again.emulator.close();
      const loadTarget = 10_000;
      const rows: Row[] = [
        { metric: "records", value: count(records) },
        { metric: "data file size", value: mb(fileBytes) },
        {
          metric: "first start (hand-made file: load, then write the emulator's own snapshot)",
          value: ms(first.startMs),
        },
        {
          metric: "restart on its own snapshot (load only)",
          value: ms(again.startMs),
          target: `< ${count(loadTarget)} ms`,
          pass: again.startMs < loadTarget,
        },
        { metric: "process RSS before the start", value: `${baselineMb.toFixed(0)} MB` },
        {
          metric: "peak RSS during the first start (process, emulator thread included)",
          value: `${first.rssMb.toFixed(0)} MB`,
        },
        { metric: "peak RSS during the restart", value: `${again.rssMb.toFixed(0)} MB` },
        {
          metric: `mean round trip of 400 PATCHes, ${settings.concurrency} at once, no added latency`,
          value: `${writeMs.toFixed(1)} ms`,
        },
        { metric: "clean stop (folds the journal into a new snapshot)", value: ms(closeMs) },
      ];
      return { id: this.id, title: this.title, rows };
    });
  },
};

/** The apply of `apply-10000`, against the in-memory emulator or one persisting to a data file. */
async function timeApply(settings: BenchSettings, dataFile: string | undefined) {
  const fleet = buildFleet(APPLY_10000.shape, APPLY_10000.mix);
  const harness = {
    profile: "seed",
    settings,
    warmUp: true,
    ...(dataFile === undefined ? {} : { dataFile }),
  } as const;
  return withFleet(fleet, harness, async ({ client }) => {
    const planned = await timeReadAndPlan(client, fleet, settings);
    const started = performance.now();
    const report = await applyPlan(client, planned.plan, planned.current, {
      concurrency: settings.concurrency,
    });
    return { applyMs: performance.now() - started, report, changes: planned.plan.changes.length };
  });
}

const applyWithDataScenario: Scenario = {
  id: "apply-10000-data",
  title: "apply-10000 against the emulator persisting to a data file (--data) beside the in-memory one",
  default: true,
  run(settings: BenchSettings) {
    return inTemporaryDirectory(async (directory) => {
      const file = join(directory, "state.json");
      // The persisted run goes first, with the client's code still cold: if anything, that is
      // counted against it.
      const persisted = await timeApply(settings, file);
      const fileBytes = (await stat(file)).size;
      const inMemory = await timeApply(settings, undefined);
      const applyRatio = persisted.applyMs / inMemory.applyMs;
      const outcomes = (run: typeof persisted) =>
        `${run.report.done} / ${run.report.failed} / ${run.report.skipped}`;
      const rows: Row[] = [
        { metric: "changes applied (each run)", value: count(persisted.changes) },
        { metric: "apply wall time, in memory", value: ms(inMemory.applyMs) },
        { metric: "apply wall time, --data (group commit)", value: ms(persisted.applyMs) },
        {
          metric: "--data / in memory",
          value: ratio(applyRatio),
          target: "≤ 1.5",
          pass: applyRatio <= 1.5,
        },
        {
          metric: "outcomes done / failed / skipped (in memory; --data)",
          value: `${outcomes(inMemory)}; ${outcomes(persisted)}`,
          target: "no failures",
          pass: [inMemory, persisted].every((run) => run.report.failed === 0 && run.report.skipped === 0),
        },
        { metric: "data file after the stop", value: mb(fileBytes) },
      ];
      return { id: this.id, title: this.title, rows };
    });
  },
};

export const EMULATOR_SCENARIOS: readonly Scenario[] = [loadScenario, applyWithDataScenario];
