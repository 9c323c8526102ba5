// /healthz tells a liveness probe whether the watcher is stuck. A cycle held by a service that hangs
// (every attempt timing out, retried) is a failed cycle to come, not a reason to restart the pod and
// lose what heal has learnt; a loop that completes no cycle, or one cycle running beyond anything its
// requests explain, is stuck.

import { describe, expect, it } from "vitest";
import { ApiClient, CLIENT_DEFAULTS } from "../../src/api/index.js";
import type { LoopState } from "../../src/watch/watch-loop.js";
import { createWatchMetrics } from "../../src/watch/watch-metrics.js";
import { startWatchServer } from "../../src/watch/watch-server.js";
import { TEST_KEY } from "../support/scripted-server.js";

const INTERVAL = 60_000;
const SECOND = 1000;

/** The bound of the client `watch` runs with, defaults as given. */
const client = new ApiClient({ baseUrl: "http://127.0.0.1:9", apiKey: TEST_KEY });

/** /healthz's answer at `now` (seconds on the loop's clock) for the loop as given. */
async function healthz(
  onTestFinished: (fn: () => Promise<void>) => void,
  loop: LoopState,
  now: number,
  lastAttemptAt?: number,
): Promise<[number, string]> {
  const server = await startWatchServer(
    { host: "127.0.0.1", port: 0 },
    createWatchMetrics({ processMetrics: false }),
    {
      loop,
      intervalMs: INTERVAL,
      requestBoundMs: client.longestRequestMs,
      now: () => now * SECOND,
      lastAttemptAt: () => (lastAttemptAt === undefined ? undefined : lastAttemptAt * SECOND),
      ready: () => true,
      notReadyReason: () => "",
    },
  );
  onTestFinished(() => server.close());
  const response = await fetch(`${server.url}/healthz`);
  return [response.status, await response.text()];
}

/** A loop whose last cycle ended at `endedAt` (seconds) and, if given, whose cycle in progress started at `runningSince`. */
function loopState(endedAt: number, runningSince?: number): LoopState {
  return {
    startedAt: 0,
    lastCycleEndedAt: endedAt * SECOND,
    cycleStartedAt: runningSince === undefined ? undefined : runningSince * SECOND,
    cycles: 1,
    running: runningSince !== undefined,
  };
}

describe("/healthz", () => {
  it("stays 200 while one cycle is held by a service that hangs (283 s at --interval 1m)", async ({
    onTestFinished,
  }) => {
    // The last cycle ended at 10 s; the next started at 70 s and is still waiting on timeouts.
    expect(await healthz(onTestFinished, loopState(10, 70), 70 + 283)).toEqual([200, "ok\n"]);
  });

  it("allows a cycle in progress at least every attempt of one request timing out, with its backoffs", () => {
    const { requestTimeoutMs, retry } = CLIENT_DEFAULTS;
    const hungRequestMs = (retry.retries + 1) * requestTimeoutMs + retry.retries * retry.maxDelayMs;
    expect(client.longestRequestMs).toBeGreaterThanOrEqual(hungRequestMs);
  });

  it("is 503 for a cycle running far beyond what its requests can take", async ({ onTestFinished }) => {
    const limit = (3 * INTERVAL + client.longestRequestMs) / SECOND;
    expect((await healthz(onTestFinished, loopState(10, 70), 70 + limit))[0]).toBe(200);
    const [status, body] = await healthz(onTestFinished, loopState(10, 70), 70 + limit + 1);
    expect(status).toBe(503);
    expect(body).toMatch(/^the cycle in progress started .* ago, longer than three intervals/);
  });

  it("stays 200 through a heal that runs for hours while its requests keep being answered", async ({
    onTestFinished,
  }) => {
    const limit = (3 * INTERVAL + client.longestRequestMs) / SECOND;
    // Started at 70 s, running for twice the bound, its last request answered a second ago.
    const now = 70 + 2 * limit;
    expect(await healthz(onTestFinished, loopState(10, 70), now, now - 1)).toEqual([200, "ok\n"]);
    // The same cycle with no answer since the bound: stuck.
    const [status, body] = await healthz(onTestFinished, loopState(10, 70), now, now - limit - 1);
    expect(status).toBe(503);
    expect(body).toMatch(/^the cycle in progress had its last answer .* ago/);
  });

  it("is 503 when no cycle runs and none has completed within three intervals", async ({
    onTestFinished,
  }) => {
    expect(await healthz(onTestFinished, loopState(10), 10 + 180)).toEqual([200, "ok\n"]);
    expect(await healthz(onTestFinished, loopState(10), 10 + 181)).toEqual([
      503,
      "no cycle has completed within three intervals\n",
    ]);
  });
});
