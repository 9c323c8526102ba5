// E2E: `pcsync logs --follow` against the emulator when an entry is stamped in the future (a
// plugin whose clock is ahead): it is printed, entries that come later are printed too, and one
// warning says why the order looks odd. Needs `npm run build` (the follower is the built binary).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleData, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { spawnCli } from "../support/cli.js";
import { waitFor } from "../support/wait-for.js";

const KEY = "logs-future-key";
const DAY_MS = 86_400_000;

let emulator: RunningEmulator;
beforeAll(async () => {
  const data = exampleData();
  // Project 2's GeoIP (id 5) has no entries in the example data: these are the test's.
  const stamp = (ms: number) => new Date(ms).toISOString();
  data.logEntries.push(
    {
      id: "future-0000-7000-8000-000000000001",
      team_id: 2,
      plugin_id: 1,
      plugin_config_id: 5,
      timestamp: stamp(Date.now() - 60_000),
      source: "SYSTEM",
      type: "INFO",
      message: "Stamped a minute ago",
      instance_id: "018fd5a0-1111-7000-8000-000000000002",
    },
    {
      id: "future-0000-7000-8000-000000000002",
      team_id: 2,
      plugin_id: 1,
      plugin_config_id: 5,
      timestamp: stamp(Date.now() + DAY_MS),
      source: "PLUGIN",
      type: "WARN",
      message: "Stamped a day ahead",
      instance_id: "018fd5a0-1111-7000-8000-000000000002",
    },
  );
  emulator = await startEmulator({
    // Only the entries the test stamps: no stream of the plugins' own.
    logRate: 0,
    profile: "seed",
    data,
    keys: [{ key: KEY, scopes: ["*"], projects: "*" }],
  });
});
afterAll(() => emulator.close());

async function runJob(type: string): Promise<void> {
  const response = await fetch(`${emulator.url}/api/projects/2/plugin_configs/5/job/`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ job: { type } }),
  });
  expect(response.status).toBe(200);
}

describe("pcsync logs --follow and an entry stamped in the future", { timeout: 30_000 }, () => {
  it("prints the entries that come after it, and warns of it once", async () => {
    const follower = spawnCli(
      ["logs", "--project", "2", "--config", "GeoIP", "--follow", "--interval", "0.1"],
      { env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY } },
    );
    const printed = (text: string) => () => follower.soFar().stdout.includes(text);
    try {
      await waitFor(printed("Stamped a day ahead"), "the backlog", 8_000);
      await runJob("first");
      await waitFor(printed("Job first queued"), "the first job's entry", 8_000);
      await runJob("second");
      await waitFor(printed("Job second queued"), "the second job's entry", 8_000);
      // More polls see every entry again: none is printed twice, and no warning is repeated.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      follower.child.kill("SIGINT");
    }
    const run = await follower.done;
    expect(run.code).toBe(0);
    const messages = run.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => line.replace(/^\S+ \S+ +\S+ +/, ""));
    expect(messages).toEqual([
      "Stamped a minute ago",
      "Stamped a day ahead",
      "Job first queued",
      "Job second queued",
    ]);
    expect(run.stderr).toMatch(
      /^warning: the entry of \S+ is stamped 24 h ahead of this machine's clock \(the service's or the plugin's clock is off\); entries that come later are still shown, in the order they arrive\n$/,
    );
  });
});
