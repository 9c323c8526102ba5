// How often planning looks at each desired family as the fleet grows: projects are planned as their
// lists arrive, and finding a project's families must not scan every family for every project
// (150 projects would read them 22,500 times). Counted against a server whose lists are all empty.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiClient } from "../src/api/index.js";
import type { DesiredFamily } from "../src/manifest/index.js";
import { readAndPlanProjects } from "../src/read/read-and-plan.js";
import { BENCH_API_KEY, buildFleet } from "./dataset.js";
import { count, type Row, type Scenario } from "./harness.js";

const SIZES = [150, 1_500] as const;
/** Reads per family beyond which the count no longer looks linear. */
const MOST_READS_PER_FAMILY = 10;

/** Plans `projects` projects of one config per family; returns how often a family was looked at. */
async function familyReads(baseUrl: string, projects: number): Promise<{ families: number; reads: number }> {
  const families: DesiredFamily[] = buildFleet({ projects, recordsPerFamily: 1 }).desired.families;
  let reads = 0;
  const counted = new Proxy(families, {
    get(target, property, receiver) {
      if (typeof property === "string" && /^\d+$/.test(property)) reads += 1;
      return Reflect.get(target, property, receiver);
    },
  });
  const client = new ApiClient({ baseUrl, apiKey: BENCH_API_KEY });
  try {
    const result = await readAndPlanProjects(client, { families: counted }, { concurrency: 8 });
    if (result.plan?.summary.create !== families.length) {
      throw new Error(`expected ${families.length} creates, planned ${String(result.plan?.summary.create)}`);
    }
  } finally {
    await client.close();
  }
  return { families: families.length, reads };
}

export const PLAN_READS_SCENARIOS: readonly Scenario[] = [
  {
    id: "plan-family-reads",
    title: `plan: how often each desired family is looked at, at ${SIZES.map(count).join(" and ")} projects`,
    default: false,
    async run() {
      const empty = JSON.stringify({ count: 0, next: null, previous: null, results: [] });
      const server = createServer((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" }).end(empty);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const rows: Row[] = [];
      try {
        const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const projects of SIZES) {
          const { families, reads } = await familyReads(baseUrl, projects);
          const perFamily = reads / families;
          rows.push({
            metric: `${count(projects)} projects (${count(families)} families): reads per family`,
            value: `${perFamily.toFixed(1)} (${count(reads)} reads)`,
            target: `< ${MOST_READS_PER_FAMILY}`,
            pass: perFamily < MOST_READS_PER_FAMILY,
          });
        }
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      return { id: this.id, title: this.title, rows };
    },
  },
];
