// E2E: the commands that run until a signal (`serve`, `logs --follow`) stop cleanly on the first
// SIGINT or SIGTERM, and a second signal of either kind ends them at once, while the first one
// still waits for a slow request: SIGTERM after Ctrl-C is not swallowed.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleData, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { spawnCli } from "../support/cli.js";
import { waitFor } from "../support/wait-for.js";

const KEY = "phx_second_signal_key_0123456789";
const SLOW_MS = 6_000;

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator({
    data: exampleData(),
    keys: [{ key: KEY, scopes: null, projects: "*" }],
  });
});
afterAll(async () => {
  emulator.setFaults({});
  await emulator.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  ["SIGINT", "SIGTERM"],
  ["SIGTERM", "SIGINT"],
] as const)("%s, then %s while the first still waits", (first, second) => {
  it("ends `pcsync serve` at the second signal, not after its slow request", async () => {
    const serve = spawnCli(["serve", "--port", "0", "--latency", String(SLOW_MS)], { timeoutMs: 60_000 });
    const line = () => /export PCSYNC_BASE_URL=(\S+) PCSYNC_API_KEY=(\S+)/.exec(serve.soFar().stdout);
    await waitFor(() => line() !== null, "pcsync serve to listen", 30_000);
    const [, url = "", key = ""] = line() ?? [];
    // A request the server will answer only in 6 s: closing waits for it.
    const slow = fetch(`${url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } }).catch(
      () => undefined,
    );
    await pause(300);
    const started = Date.now();
    serve.child.kill(first);
    await pause(300);
    expect(serve.child.exitCode).toBeNull();
    serve.child.kill(second);
    const ended = await serve.done;
    expect(Date.now() - started).toBeLessThan(SLOW_MS / 2);
    expect(ended.signal).toBe(second);
    await slow;
  }, 60_000);

  it("ends `pcsync logs --follow` at the second signal, not after its slow poll", async () => {
    emulator.setFaults({});
    const follower = spawnCli(
      ["logs", "--project", "2", "--config", "GeoIP", "--follow", "--interval", "0.1"],
      {
        env: { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY },
        timeoutMs: 60_000,
      },
    );
    try {
      // Once it follows, every poll takes 6 s.
      const polls = () => emulator.requestLog.filter((entry) => entry.path.includes("/logs/")).length;
      const before = polls();
      await waitFor(() => polls() > before + 1, "the follower to poll", 30_000);
      emulator.setFaults({ latencyMs: SLOW_MS });
      await pause(500);
      const started = Date.now();
      follower.child.kill(first);
      await pause(300);
      expect(follower.child.exitCode).toBeNull();
      follower.child.kill(second);
      const ended = await follower.done;
      expect(Date.now() - started).toBeLessThan(SLOW_MS / 2);
      expect(ended.signal).toBe(second);
    } finally {
      emulator.setFaults({});
      follower.child.kill("SIGKILL");
    }
  }, 60_000);
});
