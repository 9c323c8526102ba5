// A progressive rollout to 1,000 projects, the built CLI against the emulator: a good change
// against a plain apply of the same change (the overhead beyond the bakes), and a change that
// makes its plugins log errors in its second wave (how soon it halts, that no later wave is
// written, and that the rollback leaves nothing for a plan of the manifest before the change).

import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_API_KEY, buildFleet, NO_CHANGES, takeData } from "./dataset.js";
import { type EmulatorThread, startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Row, Scenario } from "./harness.js";
import { ms, withTempDir } from "./scenarios-manifest.js";

const CLI = process.env.PCSYNC_BENCH_CLI ?? fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const PROJECTS = 1000;
const BAKE_SECONDS = 2;
const WAVES = 3;
/** Plain apply and rollout, run this many times each, alternating. */
const PAIRS = 3;

interface TimedRun {
  code: number | null;
  wallMs: number;
  stdout: string;
  /** Each stderr line with when it arrived, in ms after the start. */
  lines: { at: number; text: string }[];
}

function run(args: readonly string[], cwd: string, url: string): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: {
        PATH: process.env.PATH ?? "",
        NO_COLOR: "1",
        PCSYNC_API_KEY: BENCH_API_KEY,
        PCSYNC_BASE_URL: url,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let partial = "";
    const lines: { at: number; text: string }[] = [];
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      const at = performance.now() - started;
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const text of parts) lines.push({ at, text });
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, wallMs: performance.now() - started, stdout, lines }));
  });
}

/** Every project's first plugin config with `description`; `rollout` lines at the top. */
function manifestText(describe: (project: number) => string | null, rollout: readonly string[]): string {
  const lines = ["version: 1", ...rollout, "projects:"];
  for (let project = 1; project <= PROJECTS; project += 1) {
    const description = describe(project);
    lines.push(
      `  "${project}":`,
      "    plugin_configs:",
      "      configs:",
      `        - name: p${project}-pc-0`,
      "          plugin: 1",
      `          description: ${description === null ? "null" : JSON.stringify(description)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function rolloutBlock(secondWave: readonly string[]): string[] {
  return [
    "rollout:",
    "  waves:",
    "    - name: canary",
    '      projects: ["1"]',
    "    - name: second",
    `      projects: [${secondWave.map((project) => `"${project}"`).join(", ")}]`,
    "    - name: rest",
    "      percent: 100",
    `  bake: ${BAKE_SECONDS}s`,
    "  health:",
    "    logs:",
    "      min_entries: 0",
  ];
}

/** Projects 2..101: the second wave, named so that the faulty change is known to land there. */
const SECOND_WAVE = Array.from({ length: 100 }, (_, index) => String(index + 2));

async function withEmulator<T>(
  settings: BenchSettings,
  logErrors: boolean,
  body: (emulator: EmulatorThread) => Promise<T>,
): Promise<T> {
  const fleet = buildFleet({ projects: PROJECTS, recordsPerFamily: 1 }, NO_CHANGES);
  const emulator = await startEmulatorThread({
    profile: "seed",
    data: takeData(fleet),
    faults: logErrors ? { logErrors: [{ description: "BROKEN", ratio: 0.5 }] } : {},
  });
  try {
    await emulator.setFaults({
      latencyMs: settings.latencyMs,
      ...(logErrors ? { logErrors: [{ description: "BROKEN", ratio: 0.5 }] } : {}),
    });
    return await body(emulator);
  } finally {
    await emulator.close();
  }
}

function expectCode(result: TimedRun, code: number, what: string): void {
  if (result.code !== code)
    throw new Error(
      `${what} exited with ${result.code}:\n${result.lines
        .slice(-8)
        .map((line) => line.text)
        .join("\n")}`,
    );
}

/** What the halt may take beyond the bake and one poll: the verdicts' lines, the journal, the halt's. */
const POLL_SLACK_MS = 150;

/**
 * One poll of a wave's health, timed apart from the rollout: a page of logs of each of the wave's
 * plugin configs, `concurrency` at a time, as the gate reads them (the ids are looked up first,
 * untimed). The halt is held to the bake plus this: what it takes beyond is the rollout's own.
 */
async function timeOnePoll(
  url: string,
  projects: readonly string[],
  settings: BenchSettings,
): Promise<number> {
  const headers = { authorization: `Bearer ${BENCH_API_KEY}` };
  const get = async (path: string) => {
    const response = await fetch(new URL(path, url), { headers });
    if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
    return (await response.json()) as { results: { id: number }[] };
  };
  const paths: string[] = [];
  for (const project of projects) {
    const list = await get(`/api/projects/${project}/plugin_configs/`);
    for (const record of list.results)
      paths.push(`/api/projects/${project}/plugin_configs/${record.id}/logs/?limit=200`);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: settings.concurrency }, async () => {
      while (next < paths.length) {
        const path = paths[next++] as string;
        await get(path);
      }
    }),
  );
  return performance.now() - started;
}

function lineAt(result: TimedRun, pattern: RegExp): number {
  const found = result.lines.find((line) => pattern.test(line.text));
  if (found === undefined) throw new Error(`no line matches ${pattern}`);
  return found.at;
}

export const ROLLOUT_SCENARIOS: readonly Scenario[] = [
  {
    id: "rollout-1000",
    title: `A rollout to ${PROJECTS} projects in ${WAVES} waves (bake ${BAKE_SECONDS}s): overhead beyond the bakes, and a halt in wave 2`,
    default: false,
    async run(settings) {
      return withTempDir(async (directory) => {
        const change = join(directory, "change.yaml");
        const plain = join(directory, "plain.yaml");
        const before = join(directory, "before.yaml");
        const broken = join(directory, "broken.yaml");
        await writeFile(
          change,
          manifestText(() => "v2", rolloutBlock(SECOND_WAVE)),
        );
        await writeFile(
          plain,
          manifestText(() => "v2", []),
        );
        await writeFile(
          before,
          manifestText(() => null, []),
        );
        await writeFile(
          broken,
          manifestText((project) => (project === 1 ? "v3" : "v3 BROKEN"), rolloutBlock(SECOND_WAVE)),
        );

        const plainApply = () =>
          withEmulator(settings, false, async (emulator) => {
            const result = await run(["apply", "-f", plain, "--auto-approve"], directory, emulator.url);
            expectCode(result, 0, "the plain apply");
            return { ...result, requests: (await emulator.requestLog()).length };
          });
        const rollout = () =>
          withEmulator(settings, false, async (emulator) => {
            const result = await run(["apply", "-f", change, "--auto-approve"], directory, emulator.url);
            expectCode(result, 0, "the rollout");
            const requests = (await emulator.requestLog()).length;
            const again = await run(["plan", "-f", plain, "--detailed-exitcode"], directory, emulator.url);
            expectCode(again, 0, "the plan after the rollout");
            return { ...result, requests };
          });
        // Pairs, each a plain apply then the rollout; the fastest of each kind is compared (on a
        // shared machine, the least disturbed run is the one closest to the code's own cost).
        const plainRuns: Awaited<ReturnType<typeof plainApply>>[] = [];
        const rolloutRuns: Awaited<ReturnType<typeof rollout>>[] = [];
        for (let pair = 0; pair < PAIRS; pair += 1) {
          plainRuns.push(await plainApply());
          rolloutRuns.push(await rollout());
        }
        const fastest = <T extends { wallMs: number }>(runs: T[]): T =>
          runs.reduce((best, next) => (next.wallMs < best.wallMs ? next : best));
        const plainRun = fastest(plainRuns);
        const rolloutRun = fastest(rolloutRuns);
        const bakesMs = WAVES * BAKE_SECONDS * 1000;
        const overhead = (rolloutRun.wallMs - bakesMs) / plainRun.wallMs - 1;

        const halt = await withEmulator(settings, true, async (emulator) => {
          const from = (await emulator.requestLog()).length;
          const result = await run(["apply", "-f", broken, "--auto-approve"], directory, emulator.url);
          expectCode(result, 4, "the rollout of the broken change");
          const log = (await emulator.requestLog()).slice(from);
          const secondWave = new Set(SECOND_WAVE);
          const laterWrites = log.filter((entry) => {
            const project = /^\/api\/projects\/(\d+)\//.exec(entry.path)?.[1];
            return (
              entry.method !== "GET" && project !== undefined && project !== "1" && !secondWave.has(project)
            );
          }).length;
          const afterwards = await run(
            ["plan", "-f", before, "--detailed-exitcode"],
            directory,
            emulator.url,
          );
          const written = lineAt(result, /wave 2\/3 "second": written and seen as planned; baking/);
          const halted = lineAt(result, /wave 2\/3 "second": \d+ failing projects?, over the failure budget/);
          return {
            delayMs: halted - written,
            pollMs: await timeOnePoll(emulator.url, SECOND_WAVE, settings),
            laterWrites,
            afterwards,
          };
        });

        const rows: Row[] = [
          {
            metric: `plain apply of the change (one wave; fastest of ${PAIRS})`,
            value: ms(plainRun.wallMs),
          },
          {
            metric: `rollout of the change (${WAVES} waves; fastest of ${PAIRS})`,
            value: ms(rolloutRun.wallMs),
          },
          { metric: "the bakes in it", value: ms(bakesMs) },
          {
            metric: "requests: plain apply / rollout",
            value: `${plainRun.requests.toLocaleString("en-US")} / ${rolloutRun.requests.toLocaleString("en-US")}`,
          },
          {
            // What the rollout's steps ask for beyond a plain apply's requests (each wave's re-read
            // after its writes, the logs of each config, a later wave's lists read again after a
            // bake, a wave read again as its bake ends) takes this long at the least, at this
            // latency and concurrency, where none of it overlaps a bake.
            metric: "the added requests alone, at this latency and concurrency, at the least",
            value: ms(
              (Math.max(0, rolloutRun.requests - plainRun.requests) / settings.concurrency) *
                settings.latencyMs,
            ),
          },
          {
            metric: "overhead beyond the bakes, against the plain apply",
            value: `${(overhead * 100).toFixed(1)} %`,
            target: "<= 10 %",
            pass: overhead <= 0.1,
          },
          {
            metric: "broken change: from wave 2 written to the halt",
            value: ms(halt.delayMs),
            target: `<= bake + one poll (${ms(BAKE_SECONDS * 1000)} + ${ms(halt.pollMs)}), with ${POLL_SLACK_MS} ms to spare`,
            pass: halt.delayMs <= BAKE_SECONDS * 1000 + halt.pollMs + POLL_SLACK_MS,
          },
          {
            metric: "writes to projects of the later wave",
            value: String(halt.laterWrites),
            target: "0",
            pass: halt.laterWrites === 0,
          },
          {
            metric: "plan of the manifest before the change, after the rollback",
            value: halt.afterwards.code === 0 ? "no changes" : `exit ${halt.afterwards.code}`,
            target: "no changes",
            pass: halt.afterwards.code === 0,
          },
        ];
        return { id: "rollout-1000", title: this.title, rows };
      });
    },
  },
];
