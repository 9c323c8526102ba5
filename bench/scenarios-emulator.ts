// The emulator at scale: loading 200,000 records from a data file, and an apply against
// `pcsync serve --data` (group commit) beside the same apply against the in-memory emulator; and
// the cost of apply's write-ahead journal: the same apply with it and without (--no-journal).

import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPlan } from "../src/apply/apply-plan.js";
import { ApplyJournal } from "../src/journal/apply-journal.js";
import { SecretRegistry } from "../src/redact.js";
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

/**
 * The apply of `apply-10000`, against the in-memory emulator or one persisting to a data file,
 * with the write-ahead journal the CLI keeps (in `journalFile`) or without (--no-journal).
 */
async function timeApply(
  settings: BenchSettings,
  options: { dataFile?: string | undefined; journalFile?: string | undefined } = {},
) {
  const fleet = buildFleet(APPLY_10000.shape, APPLY_10000.mix);
  const { dataFile, journalFile } = options;
  const harness = {
    profile: "seed",
    settings,
    warmUp: true,
    ...(dataFile === undefined ? {} : { dataFile }),
  } as const;
  return withFleet(fleet, harness, async ({ client }) => {
    const planned = await timeReadAndPlan(client, fleet, settings);
    const started = performance.now();
    // As the CLI does: the journal and its header are on disk before the first write.
    const journal =
      journalFile === undefined
        ? undefined
        : await ApplyJournal.start(
            journalFile,
            // As the CLI's: the key is registered, so every line is checked for it.
            { cwd: process.cwd(), inputs: [], secrets: SecretRegistry.of([BENCH_API_KEY]) },
            { command: "apply", server: client.base.display, plan: planned.plan, planFile: null },
            planned.current,
          );
    const report = await applyPlan(client, planned.plan, planned.current, {
      concurrency: settings.concurrency,
      journal,
    });
    await journal?.finish(report);
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
      const persisted = await timeApply(settings, { dataFile: file });
      const fileBytes = (await stat(file)).size;
      const inMemory = await timeApply(settings);
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

/** How many times each of the two applies runs, alternating (PCSYNC_BENCH_JOURNAL_RUNS; default 2). */
const JOURNAL_RUNS = Math.max(1, Number(process.env.PCSYNC_BENCH_JOURNAL_RUNS ?? 2));

const applyJournalScenario: Scenario = {
  id: "apply-10000-journal",
  title:
    "apply-10000 with the write-ahead journal (fsync per group of writes in flight) and without (--no-journal)",
  default: true,
  run(settings: BenchSettings) {
    return inTemporaryDirectory(async (directory) => {
      // Alternating, the journal's run first (cold code counts against it), so that a machine
      // whose load drifts during the scenario weighs on both sides alike.
      const withJournal: number[] = [];
      const without: number[] = [];
      const runs: Awaited<ReturnType<typeof timeApply>>[] = [];
      let journalBytes = 0;
      for (let index = 0; index < JOURNAL_RUNS; index++) {
        const journalFile = join(directory, `journal-${index}.jsonl`);
        const journaled = await timeApply(settings, { journalFile });
        journalBytes = (await stat(journalFile)).size;
        withJournal.push(journaled.applyMs);
        const plain = await timeApply(settings);
        without.push(plain.applyMs);
        runs.push(journaled, plain);
      }
      const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
      const cost = total(withJournal) / total(without) - 1;
      const list = (values: number[]) => values.map((value) => ms(value)).join(", ");
      const rows: Row[] = [
        { metric: "changes applied (each run)", value: count(runs[0]?.changes ?? 0) },
        { metric: `apply wall time with the journal (${JOURNAL_RUNS} runs)`, value: list(withJournal) },
        { metric: `apply wall time with --no-journal (${JOURNAL_RUNS} runs)`, value: list(without) },
        {
          metric: "journal's cost (sum with / sum without - 1)",
          value: `${(cost * 100).toFixed(1)}%`,
          target: "≤ 5%",
          pass: cost <= 0.05,
        },
        { metric: "journal size", value: mb(journalBytes) },
        {
          metric: "outcomes: every run done, none failed or skipped",
          value: runs.every((run) => run.report.failed === 0 && run.report.skipped === 0) ? "yes" : "no",
          target: "yes",
          pass: runs.every((run) => run.report.failed === 0 && run.report.skipped === 0),
        },
      ];
      return { id: this.id, title: this.title, rows };
    });
  },
};

export const EMULATOR_SCENARIOS: readonly Scenario[] = [
  loadScenario,
  applyWithDataScenario,
  applyJournalScenario,
];
