// A watch cycle that meets an internal error (a bug in pcsync, not anything a user gave it) fails
// /readyz, with the reason, until a cycle completes cleanly again; a user's error (a bad manifest,
// an unreachable service) does not turn a ready watcher into an unready one on its own.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import { loadManifests } from "../../src/manifest/index.js";
import { SecretRegistry } from "../../src/redact.js";
import type { CycleReport } from "../../src/watch/cycle-log.js";
import { CycleRecorder } from "../../src/watch/record-cycle.js";
import { CycleRunner } from "../../src/watch/run-cycle.js";
import { digestManifestFiles, StableManifest } from "../../src/watch/stable-manifest.js";
import { createWatchMetrics } from "../../src/watch/watch-metrics.js";
import { startWatchServer } from "../../src/watch/watch-server.js";
import { captureStreams } from "../support/capture.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const KEY = "phx_readiness_key";
let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
});
afterAll(() => work.remove());

describe("/readyz after a cycle that met an internal error", () => {
  it("fails with the reason, and recovers at the next clean cycle", async ({ onTestFinished }) => {
    const emulator = await startEmulator({
      profile: "seed",
      keys: [{ key: KEY, scopes: null, projects: "*" }],
    });
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY, retry: { retries: 0 } });
    onTestFinished(async () => {
      await client.close();
      await emulator.close();
    });
    const file = join(work.path, "pcsync.yaml");
    await writeFile(
      file,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - { name: GeoIP, plugin: 1, enabled: true }\n',
    );
    const streams = captureStreams();
    const io = {
      stdout: streams.stdout,
      stderr: streams.stderr,
      env: {},
      cwd: work.path,
      secrets: new SecretRegistry(),
    };
    let bug: Error | undefined;
    const runner = new CycleRunner({
      client,
      scope: {},
      planSettings: () => ({ concurrency: 4, plan: {} }),
      inputs: [{ path: file, what: "a manifest (-f)" }],
      io,
      mode: "warn",
      signal: new AbortController().signal,
      // The file as read, as `watch --once` uses it.
      manifest: new StableManifest(
        {
          load: () => loadManifests([file], { env: {}, cwd: work.path, varFiles: [] }),
          digest: () => digestManifestFiles([file], [], work.path),
        },
        { stableForMs: 0, once: true, notice: () => undefined },
      ),
      // The hook run-watch passes: a bug in it is a bug in pcsync, met in the middle of a cycle.
      onProjectPlanned: () => {
        if (bug !== undefined) throw bug;
      },
    });
    const recorder = new CycleRecorder(createWatchMetrics({ processMetrics: false }));
    const server = await startWatchServer(
      { host: "127.0.0.1", port: 0 },
      createWatchMetrics({ processMetrics: false }),
      {
        loop: {
          startedAt: performance.now(),
          lastCycleEndedAt: undefined,
          cycleStartedAt: undefined,
          cycles: 0,
          running: false,
        },
        intervalMs: 60_000,
        requestBoundMs: client.longestRequestMs,
        ready: () => recorder.ready,
        notReadyReason: () => recorder.notReadyReason,
      },
    );
    onTestFinished(() => server.close());
    const readyz = async () => {
      const response = await fetch(`${server.url}/readyz`);
      return { status: response.status, body: await response.text() };
    };
    const cycle = async () => {
      const report = await runner.run();
      recorder.record(report, 1, new Date());
      return report;
    };

    expect((await cycle()).result).toBe("ok");
    expect(await readyz()).toEqual({ status: 200, body: "ready\n" });

    bug = new TypeError("Cannot read properties of undefined (reading 'family')");
    const failed = await cycle();
    expect(failed).toMatchObject({ result: "failed", internalError: true });
    expect(failed.problems[0]).toContain("internal error (please report it): TypeError");
    const unready = await readyz();
    expect(unready.status).toBe(503);
    expect(unready.body).toContain("the last cycle met an internal error");

    // A user's error since (a manifest that does not parse) does not hide the bug.
    await writeFile(file, "version: 1\nprojects: [\n");
    expect((await cycle()).result).toBe("invalid_manifest");
    expect((await readyz()).status).toBe(503);

    bug = undefined;
    await writeFile(
      file,
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - { name: GeoIP, plugin: 1, enabled: true }\n',
    );
    expect((await cycle()).result).toBe("ok");
    expect(await readyz()).toEqual({ status: 200, body: "ready\n" });
  });

  it("a user's error (the service unreachable) leaves a ready watcher ready", async () => {
    const recorder = new CycleRecorder(createWatchMetrics({ processMetrics: false }));
    const base = {
      manifestValid: true,
      findings: [],
      succeeded: [],
      healed: 0,
      refused: 0,
      interrupted: false,
    };
    const ok: CycleReport = { ...base, result: "ok", problems: [] };
    recorder.record(ok, 1, new Date());
    recorder.record({ ...base, result: "failed", problems: ["cannot reach the service"] }, 1, new Date());
    expect(recorder.ready).toBe(true);
    recorder.record(
      { ...base, result: "failed", problems: ["internal error"], internalError: true },
      1,
      new Date(),
    );
    expect(recorder.ready).toBe(false);
  });
});
