// The benchmark's scenarios: each starts the emulator in-process with added latency, runs plan
// (and apply) through the same functions the CLI uses, and returns its figures as table rows.

import { applyPlan } from "../src/apply/apply-plan.js";
import type { RequestLogEntry } from "../src/emulator/index.js";
import { listsToPlan } from "../src/read/read-current-state.js";
import { bareRequestsMs } from "./bare-loop.js";
import { buildFleet, type ChangeMix, type Fleet, type FleetShape } from "./dataset.js";
import {
  APPLY_10000,
  count,
  idealWallMs,
  median,
  ms,
  peakRssMb,
  percent,
  ratio,
  type Scenario,
  timeReadAndPlan,
  trackMemory,
  withFleet,
} from "./harness.js";
import { EMULATOR_SCENARIOS } from "./scenarios-emulator.js";
import { EXPORT_SCENARIOS } from "./scenarios-export.js";
import { FAULT_SCENARIOS } from "./scenarios-faults.js";
import { FLEET_SCENARIOS } from "./scenarios-fleet.js";
import { LARGE_MANIFEST_SCENARIOS } from "./scenarios-large-manifest.js";
import { MANIFEST_SCENARIOS } from "./scenarios-manifest.js";
import { PAGE_SCENARIOS } from "./scenarios-pages.js";
import { PLAN_READS_SCENARIOS } from "./scenarios-plan-reads.js";
import { ROLLOUT_SCENARIOS } from "./scenarios-rollout.js";
import { STARTUP_SCENARIOS } from "./scenarios-startup.js";
import { STARTUP_IMPORT_SCENARIOS } from "./scenarios-startup-imports.js";
import { STRUCTURE_SCENARIOS } from "./scenarios-structure.js";
import { WATCH_SCENARIOS } from "./scenarios-watch.js";

// One list request reads a family of up to this many records (the client's page size).
const RECORDS_PER_LIST_REQUEST = 1000;

/**
 * The same list requests made by a bare undici loop at the same concurrency (no validation, no
 * limiter, no planning): the floor this harness allows, beside which the client's ratio reads.
 */
async function bareLoopMs(baseUrl: string, fleet: Fleet, concurrency: number): Promise<number> {
  const paths = listsToPlan(fleet.desired).map(
    (ref) =>
      `/api/projects/${encodeURIComponent(ref.project)}/${ref.family}/?limit=${RECORDS_PER_LIST_REQUEST}`,
  );
  return await bareRequestsMs(baseUrl, paths, concurrency);
}

function planScenario(shape: FleetShape, isDefault = true): Scenario {
  const records = shape.projects * 2 * shape.recordsPerFamily;
  const id = `plan-${shape.projects}x${shape.recordsPerFamily}`;
  return {
    id,
    title: `plan: ${count(shape.projects)} projects x 2 families x ${count(shape.recordsPerFamily)} records (${count(records)} records)`,
    default: isDefault,
    async run(settings) {
      // A few records differ, so that the planner produces a plan and not only matches.
      const fleet = buildFleet(shape, {
        updates: Math.max(1, Math.floor(shape.recordsPerFamily / 20)),
        deletes: 0,
        creates: 0,
        createsAt: "end",
      });
      const minimum = fleet.familySizes.reduce(
        (total, size) => total + Math.max(1, Math.ceil(size / RECORDS_PER_LIST_REQUEST)),
        0,
      );
      const harness = { profile: "seed", settings, warmUp: true } as const;
      return withFleet(fleet, harness, async ({ emulator, client, responses, servedBefore }) => {
        // The first plan is what a user's `pcsync plan` costs (a fresh client: cold caches, no
        // JIT); the second one shows the same work warm.
        const memory = trackMemory();
        const cpuBefore = process.cpuUsage();
        const cold = await timeReadAndPlan(client, fleet, settings);
        const cpu = process.cpuUsage(cpuBefore);
        const processCpuMs = (cpu.user + cpu.system) / 1000;
        const planMemory = memory.stop();
        const requests = client.stats.requests;
        const served = (await emulator.requestLog(servedBefore)).length;
        const roundTrip = median(responses.map((response) => response.ms));
        // Time in round trips over wall time: the concurrency the client actually kept up.
        const inFlight = responses.reduce((total, response) => total + response.ms, 0) / cold.wallMs;
        const warm = await timeReadAndPlan(client, fleet, settings);
        const bareMs = await bareLoopMs(emulator.url, fleet, settings.concurrency);
        const ideal = idealWallMs(requests, settings);
        const coldWall = cold.wallMs;
        const warmWall = warm.wallMs;
        // Two round trips carrying 1,000 records each: the ideal (latency only) ignores moving
        // and checking the records, which is most of the time there.
        const latencyBound = requests >= 10 * settings.concurrency;
        const processRss = peakRssMb();
        return {
          id,
          title: this.title,
          rows: [
            { metric: "changes planned", value: count(cold.plan.changes.length) },
            {
              metric: "requests made (client / served)",
              value: `${count(requests)} / ${count(served)}`,
            },
            { metric: "minimum the interface allows", value: count(minimum) },
            {
              metric: "requests / minimum",
              value: ratio(requests / minimum),
              target: "1.00",
              pass: requests === minimum,
            },
            {
              metric: `ideal wall time (${count(requests)} round trips of ${settings.latencyMs} ms, ${settings.concurrency} at once)`,
              value: ms(ideal),
            },
            { metric: "plan wall time, cold (read + plan step)", value: ms(coldWall) },
            {
              metric: "plan wall time, cold / ideal",
              value: ratio(coldWall / ideal),
              ...(latencyBound
                ? { target: "≤ 1.5", pass: coldWall / ideal <= 1.5 }
                : { target: "(payload-bound)" }),
            },
            { metric: "plan wall time, warm (same plan again)", value: ms(warmWall) },
            { metric: "plan wall time, warm / ideal", value: ratio(warmWall / ideal) },
            {
              metric: "harness floor: the same requests by a bare undici loop / ideal",
              value: ratio(bareMs / ideal),
            },
            { metric: "median round trip seen by the client", value: ms(roundTrip) },
            {
              metric: `requests in flight on average while reading (of ${settings.concurrency})`,
              value: inFlight.toFixed(1),
            },
            {
              metric: "CPU time of the process during the cold plan (client and emulator)",
              value: ms(processCpuMs),
            },
            {
              metric: "plan step (pure planning on the main thread), cold / warm",
              value: `${ms(cold.planningMs)} / ${ms(warm.planningMs)}`,
              ...(records >= 40_000 ? { target: "< 1,000 ms", pass: cold.planningMs < 1000 } : {}),
            },
            {
              metric: "peak RSS during the plan (process, emulator thread included)",
              value: `${planMemory.rssMb.toFixed(0)} MB`,
              target: "< 300 MB",
              pass: planMemory.rssMb < 300,
            },
            { metric: "  peak JS heap of the client's thread", value: `${planMemory.heapMb.toFixed(0)} MB` },
            {
              metric: "  process peak RSS overall (also building the fleet, starting the emulator)",
              value: `${processRss.toFixed(0)} MB`,
            },
          ],
        };
      });
    },
  };
}

interface WriteCounts {
  writes: number;
  rearranges: number;
  reads: number;
  throttled: number;
}

function countServed(entries: readonly RequestLogEntry[]): WriteCounts {
  const counts: WriteCounts = { writes: 0, rearranges: 0, reads: 0, throttled: 0 };
  for (const entry of entries) {
    if (entry.status === 429) counts.throttled += 1;
    else if (entry.method === "GET") counts.reads += 1;
    else {
      counts.writes += 1;
      if (entry.path.includes("/rearrange")) counts.rearranges += 1;
    }
  }
  return counts;
}

function applyScenario(): Scenario {
  const { shape, mix } = APPLY_10000;
  const id = "apply-10000";
  return {
    id,
    title:
      "apply: 10,000 changes (100 projects x 2 families: 30 updates, 10 deletes, 10 creates, 1 reorder each)",
    default: true,
    async run(settings) {
      const fleet = buildFleet(shape, mix);
      const harness = { profile: "seed", settings, warmUp: true } as const;
      return withFleet(fleet, harness, async ({ emulator, client }) => {
        const memory = trackMemory();
        const planned = await timeReadAndPlan(client, fleet, settings);
        const { plan } = planned;
        const changes = plan.changes.length;
        const familiesWithMoves = plan.reorders.length;
        const families = plan.families.length;
        const servedBefore = (await emulator.requestLog()).length;
        const clientBefore = client.stats.requests;
        const started = performance.now();
        const report = await applyPlan(client, plan, planned.current, { concurrency: settings.concurrency });
        const applyMs = performance.now() - started;
        const served = countServed(await emulator.requestLog(servedBefore));
        const clientRequests = client.stats.requests - clientBefore;
        const minimumWrites = changes + familiesWithMoves;
        const ideal = idealWallMs(minimumWrites, settings);

        const applyMemory = memory.stop();
        const again = await timeReadAndPlan(client, fleet, settings);
        const left = again.plan.changes.length + again.plan.reorders.length;
        return {
          id,
          title: this.title,
          rows: [
            {
              metric: "changes planned (create / update / delete)",
              value: `${count(changes)} (${count(plan.summary.create)} / ${count(plan.summary.update)} / ${count(plan.summary.delete)})`,
              target: count(fleet.expected.changes),
              pass: changes === fleet.expected.changes,
            },
            { metric: "families reordered", value: count(familiesWithMoves) },
            { metric: "plan read requests", value: count(planned.current.families.length) },
            { metric: "apply requests (client)", value: count(clientRequests) },
            {
              metric: "writes made (of them rearranges)",
              value: `${count(served.writes)} (${count(served.rearranges)})`,
            },
            {
              metric: "minimum writes (changes + 1 rearrange per reordered family)",
              value: count(minimumWrites),
            },
            {
              metric: "writes / minimum",
              value: ratio(served.writes / minimumWrites),
              target: "1.00",
              pass: served.writes === minimumWrites,
            },
            {
              metric: "reads during apply (verification)",
              value: count(served.reads),
              target: `≤ ${count(families)} (1 per family)`,
              pass: served.reads <= families,
            },
            {
              metric: "outcomes done / failed / skipped",
              value: `${report.done} / ${report.failed} / ${report.skipped}`,
              target: "no failures",
              pass: report.failed === 0 && report.skipped === 0,
            },
            { metric: "apply wall time", value: ms(applyMs) },
            {
              metric: `ideal (${count(minimumWrites)} round trips of ${settings.latencyMs} ms, ${settings.concurrency} at once)`,
              value: ms(ideal),
            },
            { metric: "apply wall time / ideal", value: ratio(applyMs / ideal) },
            {
              metric: "changes left by a fresh plan after apply",
              value: count(left),
              target: "0",
              pass: left === 0,
            },
            {
              metric: "peak RSS during plan + apply (process, emulator thread included)",
              value: `${applyMemory.rssMb.toFixed(0)} MB`,
              target: "< 300 MB",
              pass: applyMemory.rssMb < 300,
            },
            { metric: "  peak JS heap of the client's thread", value: `${applyMemory.heapMb.toFixed(0)} MB` },
          ],
        };
      });
    },
  };
}

function throttledScenario(options: {
  id: string;
  perMinute: number;
  shape: FleetShape;
  isDefault: boolean;
}): Scenario {
  const { id, perMinute, shape } = options;
  // Every family: 30 updates, 10 deletes, 10 creates appended (no reorders: rearrange on these
  // servers is keyed by plugin, and the point here is the pace of plain writes).
  const perFamily = shape.recordsPerFamily;
  const mix: ChangeMix = {
    updates: Math.round(perFamily * 0.6),
    deletes: Math.round(perFamily * 0.2),
    creates: Math.round(perFamily * 0.2),
    createsAt: "end",
  };
  const changes = shape.projects * 2 * (mix.updates + mix.deletes + mix.creates);
  const allowedRps = perMinute / 60;
  return {
    id,
    title: `throttled apply: ${count(changes)} changes against posthog-2024 throttling at ${count(perMinute)}/minute (429 without Retry-After)`,
    default: options.isDefault,
    async run(settings) {
      const fleet = buildFleet(shape, mix);
      return withFleet(
        fleet,
        { profile: "posthog-2024", settings, perMinute },
        async ({ emulator, client, responses }) => {
          const started = performance.now();
          const planned = await timeReadAndPlan(client, fleet, settings);
          const report = await applyPlan(client, planned.plan, planned.current, {
            concurrency: settings.concurrency,
            onProgress: (done, total) => {
              if (done % 250 === 0 || done === total) process.stderr.write(`  ${id}: ${done}/${total}\n`);
            },
          });
          const wallMs = performance.now() - started;
          const served = countServed(await emulator.requestLog());
          const total = served.reads + served.writes + served.throttled;
          const accepted = total - served.throttled;
          const achievedRps = accepted / (wallMs / 1000);
          // After the first 429's wait: the pace the limiter keeps once throttled.
          // (Requests in flight when the first 429 came have answered within a second.)
          const firstThrottle = responses.find((response) => response.status === 429);
          const resumed =
            firstThrottle === undefined
              ? -1
              : responses.findIndex(
                  (response) => response.at > firstThrottle.at + 1000 && response.status !== 429,
                );
          const tail = resumed >= 0 ? responses.slice(resumed) : [];
          const tailAccepted = tail.filter((response) => response.status !== 429).length;
          const tailSeconds =
            tail.length > 1 ? ((tail.at(-1)?.at ?? 0) - (tail[0]?.at ?? 0)) / 1000 : Number.NaN;
          const pacedRps = tail.length > 1 ? (tailAccepted - 1) / tailSeconds : Number.NaN;
          const share = served.throttled / total;
          return {
            id,
            title: this.title,
            rows: [
              {
                metric: "changes planned",
                value: count(planned.plan.changes.length),
                target: count(changes),
                pass: planned.plan.changes.length === changes,
              },
              {
                metric: "requests (reads + writes + 429s)",
                value: `${count(total)} (${count(served.reads)} + ${count(served.writes)} + ${count(served.throttled)})`,
              },
              { metric: "429 share", value: percent(share), target: "< 5 %", pass: share < 0.05 },
              { metric: "wall time (read, plan, apply)", value: ms(wallMs) },
              { metric: "allowed rate", value: `${allowedRps.toFixed(2)} req/s` },
              {
                metric: "achieved rate (accepted requests / wall time)",
                value: `${achievedRps.toFixed(2)} req/s`,
              },
              {
                metric: "achieved rate / allowed rate",
                value: ratio(achievedRps / allowedRps),
                target: "≥ 0.90",
                pass: achievedRps / allowedRps >= 0.9,
              },
              {
                metric: "paced rate after the first throttle / allowed rate",
                value: Number.isNaN(pacedRps) ? "no throttling" : ratio(pacedRps / allowedRps),
              },
              { metric: "limiter's rate at the end", value: `${client.limiter.state.rps.toFixed(2)} req/s` },
              {
                metric: "outcomes done / failed / skipped",
                value: `${report.done} / ${report.failed} / ${report.skipped}`,
                target: "no failures",
                pass: report.failed === 0 && report.skipped === 0,
              },
            ],
          };
        },
      );
    },
  };
}

export const SCENARIOS: readonly Scenario[] = [
  planScenario({ projects: 1, recordsPerFamily: 1000 }),
  planScenario({ projects: 100, recordsPerFamily: 50 }),
  planScenario({ projects: 1000, recordsPerFamily: 20 }),
  applyScenario(),
  // 6,000 changes at 4,800/minute: one throttling episode in about a minute and a half.
  throttledScenario({
    id: "throttled-quick",
    perMinute: 4800,
    shape: { projects: 60, recordsPerFamily: 50 },
    isDefault: true,
  }),
  // The real service's limit: 2,000 changes at 480/minute take over four minutes.
  throttledScenario({
    id: "throttled",
    perMinute: 480,
    shape: { projects: 20, recordsPerFamily: 50 },
    isDefault: false,
  }),
  // One small fleet (about 80 s: the service's window is a minute, and only a run longer than one
  // shows a throttling).
  throttledScenario({
    id: "throttled-small",
    perMinute: 1200,
    shape: { projects: 15, recordsPerFamily: 50 },
    isDefault: false,
  }),
  ...FLEET_SCENARIOS,
  ...PAGE_SCENARIOS,
  ...EMULATOR_SCENARIOS,
  ...PLAN_READS_SCENARIOS,
  ...STARTUP_SCENARIOS,
  ...STARTUP_IMPORT_SCENARIOS,
  ...STRUCTURE_SCENARIOS,
  ...FAULT_SCENARIOS,
  ...EXPORT_SCENARIOS,
  ...MANIFEST_SCENARIOS,
  ...LARGE_MANIFEST_SCENARIOS,
  ...WATCH_SCENARIOS,
  ...ROLLOUT_SCENARIOS,
];
