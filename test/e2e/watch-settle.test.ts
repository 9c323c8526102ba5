// E2E: a long-running `pcsync watch` and the manifest changing under it, the built CLI against the
// emulator. A writer that pauses mid-file never leads to a write or a drift event; a change that
// stays is used after the settle time; what leaves the manifest leaves the metrics. The settle
// time is scaled down with the interval (their default ratio, 10 s to 5 minutes, is kept).

import { readFile, rename, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { metricValue, startWatcher } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A webhook receiver on port 0 that keeps the events it gets. */
async function openReceiver(onFinished: (handler: () => Promise<void>) => void) {
  const events: { event: string; summary: Record<string, number> }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      events.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events };
}

/** Project 2's plugin_configs, pruned: the seed's GeoIP and `count` configs of ours. */
function pruned(count: number): string {
  const configs = Array.from({ length: count }, (_, index) => [
    `        - name: cfg ${index + 1}`,
    "          plugin: 2",
    "          enabled: true",
  ]).flat();
  return manifest(
    "version: 1",
    "projects:",
    '  "2":',
    "    plugin_configs:",
    "      prune: true",
    "      configs:",
    "        - name: GeoIP",
    "          plugin: 1",
    "          enabled: true",
    ...configs,
  );
}

describe.concurrent("pcsync watch and a manifest being written", { timeout: 60_000 }, () => {
  it("never writes from the first part of a slow write; uses the whole once it has settled", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openReceiver(onTestFinished);
    const file = join(directory, "slow-writer.yaml");
    await writeFile(file, pruned(19));
    // 90 s and 3 s: the default 5 minutes and 10 s, scaled down together. Cycles after the first
    // come from SIGHUP (one during the writer's pause) or from the settle.
    const watcher = await startWatcher(
      [
        "-f",
        file,
        "--mode",
        "heal",
        "--interval",
        "90s",
        "--jitter",
        "0",
        "--manifest-settle",
        "3s",
        "--webhook",
        receiver.url,
      ],
      { env: server.env },
    );
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    expect((await watcher.cycles(1))[0]).toMatch(/cycle 1 ok .*19 healed/);
    const ids = new Map((await server.list(2, "plugin_configs")).map((record) => [record.name, record.id]));
    expect(ids.size).toBe(20);
    await expect.poll(() => receiver.events.map((event) => event.event)).toEqual(["healed"]);
    const requestsBefore = server.emulator.requestLog.length;

    // The writer rewrites the file in place with one config more: the first part (16 of the 21
    // configs, so a prune of the rest would be 4 of 20 records, under the 30% guard), a pause
    // longer than the half second the watcher used to wait, then the rest.
    const next = pruned(20);
    const cut = next.indexOf("        - name: cfg 16\n");
    // The pause is timed from the first write, whatever the cycle it overlaps takes.
    await writeFile(file, next.slice(0, cut));
    watcher.signal("SIGHUP");
    await sleep(1_200);
    await writeFile(file, next);
    expect((await watcher.cycles(2))[1]).toMatch(/cycle 2 ok .*0 drifting \(0 changes\)$/);

    // Once the whole has stayed the same for the settle time, a cycle uses it: one create.
    expect((await watcher.cycles(3))[2]).toMatch(/cycle 3 ok .*: 1 healed/);
    const writes = server.emulator.requestLog
      .slice(requestsBefore)
      .filter((request) => request.method !== "GET");
    expect(writes.map((request) => request.method)).toEqual(["POST"]);
    const after = await server.list(2, "plugin_configs");
    expect(after).toHaveLength(21);
    for (const record of after) {
      if (record.name !== "cfg 20") expect(record.id).toBe(ids.get(record.name ?? ""));
    }
    await expect.poll(() => receiver.events.map((event) => event.event)).toEqual(["healed", "healed"]);
    expect(receiver.events[1]?.summary).toMatchObject({ create: 1, update: 0, delete: 0 });
    const { stderr } = watcher.soFar();
    expect(stderr.match(/planning with the last settled version/g)).toHaveLength(1);
    expect(stderr).toContain("the manifest changed; using the new version (unchanged for 3 s)");
  });

  it("removes the series of a project that leaves the manifest, from /metrics and the metrics file", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = join(directory, "two-projects.yaml");
    const metricsFile = join(directory, "two-projects.prom");
    const geoIp = (project: string, enabled: boolean) => [
      `  "${project}":`,
      "    plugin_configs:",
      "      configs:",
      "        - name: GeoIP",
      "          plugin: 1",
      `          enabled: ${enabled}`,
    ];
    await writeFile(file, manifest("version: 1", "projects:", ...geoIp("1", true), ...geoIp("2", false)));
    // 3 s and 100 ms: the default 5 minutes and 10 s, scaled down together.
    const watcher = await startWatcher(
      [
        "-f",
        file,
        "--mode",
        "heal",
        "--interval",
        "3s",
        "--jitter",
        "0",
        "--manifest-settle",
        "100ms",
        "--metrics-file",
        metricsFile,
      ],
      { env: server.env },
    );
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    await watcher.cycles(1);
    const project2 = { project: "2", family: "plugin_configs" };
    const seriesOf2 = (text: string) => ({
      drift: metricValue(text, "pcsync_drift_changes", project2),
      heals: metricValue(text, "pcsync_heals_total", project2),
      success: metricValue(text, "pcsync_last_success_timestamp_seconds", { project: "2" }) !== undefined,
    });
    const scraped = async () => (await watcher.get("/metrics")).text;
    expect(seriesOf2(await scraped())).toEqual({ drift: 0, heals: 1, success: true });
    // The file is written once the cycle's line is out.
    const fileText = () => readFile(metricsFile, "utf8").catch(() => "");
    await expect.poll(async () => seriesOf2(await fileText())).toEqual({ drift: 0, heals: 1, success: true });

    // Project 2 leaves the manifest, renamed into place as a safe writer does.
    await writeFile(`${file}.new`, manifest("version: 1", "projects:", ...geoIp("1", true)));
    await rename(`${file}.new`, file);
    const cycles = (await watcher.cycles(1)).length;
    await expect
      .poll(async () => seriesOf2(await scraped()), { timeout: 15_000 })
      .toEqual({ drift: undefined, heals: undefined, success: false });
    // Within one cycle after the settle: the cycle that sees the change, then the one that uses it.
    expect(watcher.soFar().stdout.match(/cycle \d+ /g)?.length ?? 0).toBeLessThanOrEqual(cycles + 2);
    await expect
      .poll(async () => seriesOf2(await fileText()))
      .toEqual({ drift: undefined, heals: undefined, success: false });
    const text = await scraped();
    expect(metricValue(text, "pcsync_drift_changes", { project: "1", family: "plugin_configs" })).toBe(0);
    expect(metricValue(text, "pcsync_last_success_timestamp_seconds", { project: "1" })).toBeDefined();
  });

  it("refuses a --manifest-settle that is not a duration from 0s to 1h, before any request", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = join(directory, "settle-flag.yaml");
    await writeFile(file, manifest("version: 1", "projects: {}"));
    for (const value of ["banana", "-1s", "2h", "10", ""]) {
      const run = await server.run(["watch", "--once", "-f", file, "--manifest-settle", value]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 1,
        stderr: `pcsync: --manifest-settle must be a duration from 0s to 1h, such as 10s, 30s or 2m, not "${value}"\n`,
      });
    }
    expect(server.emulator.requestLog).toEqual([]);
    const zero = await server.run(["watch", "--once", "-f", file, "--manifest-settle", "0"]);
    expect(zero.code, zero.stderr).not.toBe(1);
  });
});
