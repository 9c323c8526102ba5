// One big family against a server that caps its pages: the plan's read of 20,000 configs in
// pages of 100, asked by offset several at once, beside the same pages read by following `next`.

import { ApiClient, listAllConfigs, paginate } from "../src/api/index.js";
import { readAndPlanProjects } from "../src/read/read-and-plan.js";
import { bareRequestsMs } from "./bare-loop.js";
import { BENCH_API_KEY, buildFleet, takeData } from "./dataset.js";
import { startEmulatorThread } from "./emulator-thread.js";
import type { BenchSettings, Row, Scenario } from "./harness.js";

const RECORDS = 20_000;
const SERVER_PAGE_CAP = 100;
const FAMILY_PATH = "/api/projects/1/plugin_configs/";

const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`;
const count = (value: number) => value.toLocaleString("en-US");

/** Rounds of `concurrency` round trips of `latencyMs` each: the wall time if only latency counted. */
function idealWallMs(requests: number, settings: BenchSettings): number {
  return Math.ceil(requests / settings.concurrency) * settings.latencyMs;
}

/** A client whose requests in flight are summed (round-trip time) and sampled (at each response). */
function measuredClient(url: string, settings: BenchSettings) {
  const measured = { roundTripMs: 0, peakInFlight: 0, client: undefined as ApiClient | undefined };
  const client = new ApiClient({
    baseUrl: url,
    apiKey: BENCH_API_KEY,
    concurrency: settings.concurrency,
    trace: (line) => {
      const match = / -> \d{3} \((\d+) ms/.exec(line);
      if (!match) return;
      measured.roundTripMs += Number(match[1]);
      // The answered request still holds its slot here: this counts it.
      const inFlight = measured.client?.limiter.state.inFlight ?? 0;
      measured.peakInFlight = Math.max(measured.peakInFlight, inFlight);
    },
  });
  measured.client = client;
  return { client, measured };
}

function bigFamilyScenario(): Scenario {
  const id = "pages-20000";
  return {
    id,
    title: `plan: 1 project, 1 family of ${count(RECORDS)} configs, pages capped at ${SERVER_PAGE_CAP} by the server`,
    default: true,
    async run(settings) {
      const fleet = buildFleet({ projects: 1, recordsPerFamily: RECORDS });
      const desired = {
        ...fleet.desired,
        families: fleet.desired.families.filter((family) => family.family === "plugin_configs"),
      };
      const emulator = await startEmulatorThread({
        profile: "seed",
        data: takeData(fleet),
        faults: { maxPageSize: SERVER_PAGE_CAP },
      });
      try {
        // A real service is warm: a few pages without latency before the measured reads.
        for (let offset = 0; offset < 20 * SERVER_PAGE_CAP; offset += SERVER_PAGE_CAP) {
          const response = await fetch(`${emulator.url}${FAMILY_PATH}?limit=1000&offset=${offset}`, {
            headers: { authorization: `Bearer ${BENCH_API_KEY}` },
          });
          await response.arrayBuffer();
        }
        await emulator.setFaults({ latencyMs: settings.latencyMs, maxPageSize: SERVER_PAGE_CAP });
        (globalThis as { gc?: () => void }).gc?.();

        // The read as `pcsync plan` makes it: a fresh client, nothing compiled yet.
        const byOffset = measuredClient(emulator.url, settings);
        const readStarted = performance.now();
        const listed = await listAllConfigs(byOffset.client, "1", "plugin_configs");
        const readMs = performance.now() - readStarted;
        const requests = byOffset.client.stats.requests;
        await byOffset.client.close();

        // The same read again in this process: what of the cold read's time is compiling.
        const warm = measuredClient(emulator.url, settings);
        const warmStarted = performance.now();
        await listAllConfigs(warm.client, "1", "plugin_configs");
        const warmMs = performance.now() - warmStarted;
        await warm.client.close();

        const planClient = measuredClient(emulator.url, settings).client;
        const planStarted = performance.now();
        const { plan, errors, planningMs } = await readAndPlanProjects(planClient, desired, {
          concurrency: settings.concurrency,
        });
        const planMs = performance.now() - planStarted;
        await planClient.close();
        if (!plan) throw new Error(`the benchmark's plan failed: ${errors[0]?.message ?? "?"}`);

        // The same pages by following `next` one at a time, as reads went before.
        const walking = measuredClient(emulator.url, settings);
        const walkStarted = performance.now();
        let walked = 0;
        const firstUrl = walking.client.url(FAMILY_PATH, { limit: walking.client.pageSize });
        for await (const page of paginate(walking.client, firstUrl, "recordPage")) {
          walked += page.results.length;
        }
        const walkMs = performance.now() - walkStarted;
        await walking.client.close();

        const minimum = Math.ceil(RECORDS / SERVER_PAGE_CAP);
        const pagePaths = Array.from(
          { length: minimum },
          (_, index) => `${FAMILY_PATH}?limit=${SERVER_PAGE_CAP}&offset=${index * SERVER_PAGE_CAP}`,
        );
        const bareMs = await bareRequestsMs(emulator.url, pagePaths, settings.concurrency);
        const ideal = idealWallMs(requests, settings);
        const inFlight = (measured: { roundTripMs: number; peakInFlight: number }, wallMs: number) =>
          `${(measured.roundTripMs / wallMs).toFixed(1)} / ${measured.peakInFlight}`;
        const rows: Row[] = [
          {
            metric: "records read (by offset / walking next)",
            value: `${count(listed.length)} / ${count(walked)}`,
          },
          {
            metric: `requests made (minimum: ${count(minimum)} pages of ${SERVER_PAGE_CAP})`,
            value: count(requests),
            target: count(minimum),
            pass: requests === minimum,
          },
          {
            metric: `ideal wall time (${count(requests)} round trips of ${settings.latencyMs} ms, ${settings.concurrency} at once)`,
            value: ms(ideal),
          },
          { metric: "read wall time, pages by offset (cold client)", value: ms(readMs) },
          {
            metric: "read wall time / ideal",
            value: (readMs / ideal).toFixed(2),
            target: "≤ 1.5",
            pass: readMs / ideal <= 1.5,
          },
          {
            metric: `requests in flight while reading: average / peak (of ${settings.concurrency})`,
            value: inFlight(byOffset.measured, readMs),
          },
          {
            metric: "read wall time, warm (the same read again) / ideal",
            value: `${ms(warmMs)}, ${(warmMs / ideal).toFixed(2)}`,
          },
          {
            metric: "harness floor: the same pages by a bare undici loop / ideal",
            value: (bareMs / ideal).toFixed(2),
          },
          {
            metric: "plan wall time (the read, then the plan step of the one project)",
            value: `${ms(planMs)} (plan step ${ms(planningMs)})`,
          },
          { metric: "read walking next one page at a time (before)", value: ms(walkMs) },
          { metric: "  walking next / ideal", value: (walkMs / ideal).toFixed(2) },
          {
            metric: "  requests in flight walking next: average / peak",
            value: inFlight(walking.measured, walkMs),
          },
        ];
        return { id, title: this.title, rows };
      } finally {
        await emulator.close();
      }
    },
  };
}

export const PAGE_SCENARIOS: readonly Scenario[] = [bigFamilyScenario()];
