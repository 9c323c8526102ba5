// When cycles run (never two at once, a slow one delays the next, SIGHUP starts one now), and a
// manifest read while it is being written is read again rather than half used.

import { appendFile, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LoadResult } from "../../src/manifest/index.js";
import { loadSettledManifests } from "../../src/watch/settled-manifest.js";
import { WatchLoop } from "../../src/watch/watch-loop.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory } from "../support/work-dir.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.concurrent("WatchLoop", () => {
  it("never overlaps cycles: one longer than the interval delays the next, none stack up", async () => {
    const stop = new AbortController();
    let running = 0;
    let most = 0;
    const spans: [number, number][] = [];
    const loop = new WatchLoop({
      intervalMs: 20,
      jitterShare: 0,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        running += 1;
        most = Math.max(most, running);
        const started = performance.now();
        await sleep(60);
        spans.push([started, performance.now()]);
        running -= 1;
        if (spans.length === 4) stop.abort();
      },
    });
    await loop.run();
    expect(most).toBe(1);
    expect(loop.cycles).toBe(4);
    for (let index = 1; index < spans.length; index++) {
      expect(spans[index]?.[0]).toBeGreaterThanOrEqual(spans[index - 1]?.[1] ?? Number.POSITIVE_INFINITY);
    }
  });

  it("starts a cycle at once on trigger, after the one running when it comes during a cycle", async () => {
    const stop = new AbortController();
    const starts: number[] = [];
    const loop = new WatchLoop({
      intervalMs: 3_600_000,
      jitterShare: 0.1,
      once: false,
      stop: stop.signal,
      cycle: async () => {
        starts.push(performance.now());
        if (starts.length === 1) {
          loop.trigger();
          await sleep(30);
        }
        if (starts.length === 3) stop.abort();
      },
    });
    const running = loop.run();
    await waitFor(() => starts.length === 2, "the triggered cycle");
    // The interval is an hour: nothing else starts a cycle.
    await sleep(50);
    expect(starts).toHaveLength(2);
    loop.trigger();
    await running;
    expect(starts).toHaveLength(3);
  });

  it("spreads the interval by the jitter, either way", () => {
    const values = [0, 0.5, 1];
    const loop = new WatchLoop({
      intervalMs: 1000,
      jitterShare: 0.1,
      once: true,
      stop: new AbortController().signal,
      cycle: async () => undefined,
      random: () => values.shift() ?? 0.5,
    });
    expect([loop.nextDelayMs(), loop.nextDelayMs(), loop.nextDelayMs()]).toEqual([900, 1000, 1100]);
  });
});

describe("loadSettledManifests", () => {
  it("reads a file being written again, once it has settled, and never uses the half", async ({
    onTestFinished,
  }) => {
    const { path, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(path, "pcsync.yaml");
    await writeFile(file, "version: 1\nprojects:\n");
    const seen: string[] = [];
    const load = async (): Promise<LoadResult> => {
      seen.push(await readFile(file, "utf8"));
      // The writer finishes while the first read is being used.
      if (seen.length === 1) await appendFile(file, '  "1": {}\n');
      return { value: undefined, errors: [], warnings: [], files: [file] };
    };
    const loaded = await loadSettledManifests(load, path, { settleMs: 50, maxReads: 10 });
    expect(loaded.settled).toBe(true);
    expect(seen.at(-1)).toBe('version: 1\nprojects:\n  "1": {}\n');
    expect(seen.length).toBeGreaterThanOrEqual(2);
  });

  it("reads a file untouched for a while once, and gives up on one that never stops changing", async ({
    onTestFinished,
  }) => {
    const { path, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(path, "pcsync.yaml");
    await writeFile(file, "version: 1\n");
    const past = new Date(Date.now() - 60_000);
    await utimes(file, past, past);
    let reads = 0;
    const result = { value: undefined, errors: [], warnings: [], files: [file] };
    const once = await loadSettledManifests(
      async () => {
        reads += 1;
        return result;
      },
      path,
      { settleMs: 50, maxReads: 10 },
    );
    expect([once.settled, reads]).toEqual([true, 1]);
    let writes = 0;
    const churning = await loadSettledManifests(
      async () => {
        await writeFile(file, `version: 1\n# ${++writes}\n`);
        return result;
      },
      path,
      { settleMs: 20, maxReads: 4 },
    );
    expect(churning.settled).toBe(false);
  });
});
