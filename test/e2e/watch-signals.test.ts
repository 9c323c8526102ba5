// E2E: signals and `pcsync watch`, the built CLI against the emulator. SIGHUP (systemctl reload)
// never ends it: not while it starts (its modules load, its client and server start), where the
// first cycle answers it, and not while it stops and drains its webhook events, where it is
// ignored. The summary of a stop that cuts a cycle short adds up to the cycles it names.

import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, it } from "vitest";
import { CLI_MODULES_PATH, spawnCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

const HOLD_MODULE = fileURLToPath(new URL("../support/hold-module.mjs", import.meta.url));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

/** Project 1's GeoIP; the seed profile holds it enabled, so `enabled: false` drifts. */
function geoIp(enabled: boolean): string {
  return manifest(
    "version: 1",
    "projects:",
    '  "1":',
    "    plugin_configs:",
    "      configs:",
    "        - name: GeoIP",
    "          plugin: 1",
    `          enabled: ${enabled}`,
  );
}

/** A webhook receiver on port 0 that answers nothing until `answer()`: the watcher's stop drains. */
async function openSlowReceiver(onFinished: (handler: () => Promise<void>) => void) {
  const waiting: ServerResponse[] = [];
  let answering = false;
  const server = createServer((request, response) => {
    request.resume().on("end", () => {
      if (answering) response.writeHead(200).end();
      else waiting.push(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => waiting.length,
    answer() {
      answering = true;
      for (const response of waiting.splice(0)) response.writeHead(200).end();
    },
  };
}

const SUMMARY = /stopped by SIGTERM after 1 cycle \(1 ok, 0 failed, 0 guarded, 0 invalid_manifest\)/;

describe("SIGHUP never ends pcsync watch", { timeout: 60_000, concurrent: true }, () => {
  // Each module's load is held while the SIGHUP comes: the first one the binary loads after it
  // holds signals (nothing of the run loaded yet), the command's, and the service's, which watch's
  // action imports after the start-up hold of SIGINT and SIGTERM has gone and before the watcher
  // listens for signals itself.
  it.for([
    { held: "/dist/src/cli/run-binary.js" },
    { held: "/dist/src/cli/commands/watch.js" },
    { held: "/dist/src/watch/run-watch.js" },
  ])(
    "a SIGHUP while $held loads: the watcher starts, its first cycle reads the manifest",
    async ({ held }, { onTestFinished, expect }) => {
      const server = await openServer(onTestFinished, "seed");
      const name = held.replaceAll(/\W/g, "-");
      const file = join(directory, `starting${name}.yaml`);
      await writeSettled(file, geoIp(true));
      const marker = join(directory, `held${name}`);
      const release = join(directory, `release${name}`);
      const run = spawnCli(["watch", "-f", file, "--interval", "1h", "--listen", "127.0.0.1:0"], {
        env: {
          ...server.env,
          NODE_OPTIONS: `--import=${pathToFileURL(HOLD_MODULE).href}`,
          PCSYNC_TEST_HOLD_MODULE: held,
          PCSYNC_TEST_HOLD_MARKER: marker,
          PCSYNC_TEST_HOLD_RELEASE: release,
        },
        cliPath: CLI_MODULES_PATH, // the tree of modules, whose loads are held above
        timeoutMs: 50_000,
      });
      let exited = false;
      void run.done.then(() => {
        exited = true;
      });
      onTestFinished(async () => {
        run.child.kill("SIGKILL");
        await run.done;
      });
      await waitFor(() => existsSync(marker), `the load of ${held}`);
      run.child.kill("SIGHUP");
      // The main thread, idle while the load is held, takes the signal long before this.
      await sleep(500);
      await writeFile(release, "");
      await waitFor(() => exited || /cycle 1 /.test(run.soFar().stdout), "cycle 1", 30_000);
      run.child.kill("SIGTERM");
      const ended = await run.done;

      expect(ended.signal, ended.stderr).toBeNull();
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stdout).toMatch(/cycle 1 ok in .*1 family, 0 drifting/);
      // Answered by the first cycle, which reads the manifest anyway: one cycle, not two.
      expect(ended.stdout).not.toMatch(/cycle 2 /);
      expect(ended.stderr).toContain(
        "pcsync watch: SIGHUP received while starting: the first cycle reads the manifest\n",
      );
      expect(ended.stderr).toMatch(SUMMARY);
    },
  );

  it("a SIGHUP while the stop drains the webhook events is ignored: the summary is printed, exit 0", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openSlowReceiver(onTestFinished);
    const file = join(directory, "draining.yaml");
    await writeSettled(file, geoIp(false));
    const watcher = await startWatcher(["-f", file, "--interval", "1h", "--webhook", receiver.url], {
      env: server.env,
    });
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    expect((await watcher.cycles(1))[0]).toMatch(/cycle 1 ok .*1 drifting/);
    await waitFor(() => receiver.received() === 1, "the drift_opened event");
    watcher.signal("SIGTERM");
    // The endpoints close just before the drain starts: once they refuse, it is draining.
    await waitFor(() => /SIGTERM received: stopping/.test(watcher.soFar().stderr), "the stop");
    let closed = false;
    while (!closed) {
      closed = await watcher.get("/healthz").then(
        () => false,
        () => true,
      );
      if (!closed) await sleep(50);
    }
    watcher.signal("SIGHUP");
    await sleep(500);
    receiver.answer();
    const ended = await watcher.done;

    expect(ended.signal, ended.stderr).toBeNull();
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toContain("pcsync watch: SIGHUP received while stopping: ignored\n");
    expect(ended.stderr).toMatch(SUMMARY);
    expect(ended.stderr).toMatch(/webhook events: 1 delivered, 0 failed, 0 dropped\n/);
  });
});

describe("the summary of a stop", { timeout: 60_000 }, () => {
  it("SIGTERM during a cycle: the cycle cut short is counted as interrupted", async ({
    onTestFinished,
    expect,
  }) => {
    // Each request answered after a while, one at a time: the SIGTERM comes while the first
    // cycle reads, and its next read is never sent.
    const server = await openServer(onTestFinished, "seed", { faults: { latencyMs: 2500 } });
    const file = join(directory, "interrupted.yaml");
    await writeSettled(file, geoIp(true));
    const watcher = await startWatcher(["-f", file, "--interval", "1h", "--concurrency", "1"], {
      env: server.env,
    });
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    // Well inside the first request's wait, wherever the cycle's start falls on a loaded machine.
    await sleep(1000);
    watcher.signal("SIGTERM");
    const ended = await watcher.done;

    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stderr).toContain("the cycle in progress finishes its writes in flight");
    expect(ended.stdout).not.toMatch(/cycle 1 /);
    expect(ended.stderr).toMatch(
      /stopped by SIGTERM after 1 cycle \(0 ok, 0 failed, 0 guarded, 0 invalid_manifest, 1 interrupted\); 0 changes healed\n/,
    );
  });
});
