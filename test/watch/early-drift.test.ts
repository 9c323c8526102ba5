// The drift gauge moves as each project is planned, not once the whole cycle has read every
// project: an edit seen early in a long cycle is on /metrics at once. What the cycle's end reports
// (heal's result, families that left the manifest, a failed cycle) stays as it was.

import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/program.js";
import type { DesiredFamily } from "../../src/manifest/types.js";
import { renderOwnMetrics } from "../../src/notify/metrics-file.js";
import { planProject } from "../../src/plan/compute-plan.js";
import type { CycleReport } from "../../src/watch/cycle-log.js";
import { earlyDriftOf } from "../../src/watch/heal.js";
import { CycleRecorder } from "../../src/watch/record-cycle.js";
import { createWatchMetrics } from "../../src/watch/watch-metrics.js";
import { desiredConfig, desiredFamily, remoteRecord } from "../support/builders.js";
import { captureStreams } from "../support/capture.js";
import { manifest } from "../support/manifest-text.js";
import { record, sendJson, startScriptedServer, TEST_KEY } from "../support/scripted-server.js";
import { waitFor } from "../support/wait-for.js";
import { metricValue, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

const DRIFT = "pcsync_drift_changes";
const LIST = /^\/api\/projects\/(\d+)\/(plugin_configs|pipeline_frontend_apps_configs)\/(\?.*)?$/;

describe("pcsync watch shows each project's drift as soon as it is planned", () => {
  it("has project 1's drift on /metrics while project 2's list is still being read", async ({
    onTestFinished,
  }) => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let project2Asked = false;
    const server = await startScriptedServer(async (request, response) => {
      const [, project, family] = LIST.exec(request.url) ?? [];
      if (project === undefined) return sendJson(response, 404, {});
      if (project === "2") {
        project2Asked = true;
        await held;
      }
      // Project 1's GeoIP was disabled out of band; project 2's is as the manifest says.
      const geoIp = record(7, { name: "GeoIP", plugin: 12, order: 1, enabled: project !== "1" });
      const results = family === "plugin_configs" ? [geoIp] : [];
      sendJson(response, 200, { count: results.length, next: null, previous: null, results });
    });
    onTestFinished(async () => {
      release();
      await server.close();
    });
    const file = join(directory, "two-projects.yaml");
    const project = (id: string) => [
      `  "${id}":`,
      "    plugin_configs:",
      "      configs:",
      "        - name: GeoIP",
      "          plugin: 12",
      "          enabled: true",
    ];
    await writeSettled(file, manifest("version: 1", "projects:", ...project("1"), ...project("2")));

    const streams = captureStreams();
    const run = runCli(["watch", "--once", "--listen", "127.0.0.1:0", "-f", file, "--base-url", server.url], {
      stdout: streams.stdout,
      stderr: streams.stderr,
      env: { NO_COLOR: "1", PCSYNC_API_KEY: TEST_KEY },
      cwd: directory,
    });
    await waitFor(() => /serving .* on http:\/\/\S+/.test(streams.text().stderr), "the watcher to listen");
    const url = /serving .* on (http:\/\/\S+)/.exec(streams.text().stderr)?.[1];
    const metrics = async () => await (await fetch(`${url}/metrics`)).text();
    let text = "";
    const deadline = Date.now() + 10_000;
    while (metricValue(text, DRIFT, { project: "1", family: "plugin_configs" }) === undefined) {
      if (Date.now() > deadline) throw new Error(`project 1's gauge never showed:\n${streams.text().stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      text = await metrics();
    }
    // Project 2's list is asked and not answered: the cycle is still reading, and already shows 1.
    expect(project2Asked).toBe(true);
    expect(metricValue(text, DRIFT, { project: "1", family: "plugin_configs" })).toBe(1);
    expect(metricValue(text, DRIFT, { project: "2", family: "plugin_configs" })).toBeUndefined();
    expect(metricValue(text, "pcsync_cycles_total", { result: "ok" })).toBe(0);

    release();
    // The cycle's end reports the same: one family of two drifting, exit 2 as plan's.
    expect(await run).toBe(2);
    expect(streams.text().stdout).toMatch(/cycle 1 ok in .*: 2 families, 1 drifting \(1 change\)/);
  });
});

describe("earlyDriftOf (the drift a cycle can show before it ends)", () => {
  const geoIp = (enabled: boolean) => desiredConfig({ name: "GeoIP", plugin: 12, enabled, order: 1 });
  const remote = {
    project: "1",
    family: "plugin_configs" as const,
    records: [remoteRecord({ id: 7, name: "GeoIP", plugin: 12, enabled: false, order: 1 })],
  };
  const apps = { project: "1", family: "pipeline_frontend_apps_configs" as const, records: [] };
  const counts = (desired: DesiredFamily[], fallback: "warn" | "heal") =>
    [...earlyDriftOf(planProject("1", desired, [remote, apps]), desired, fallback).values()].map(
      ({ family, changes }) => `${family}=${changes}`,
    );

  it("shows a family in warn, and one in heal only when it is in sync (heal decides the rest)", () => {
    const drifting = desiredFamily("1", "plugin_configs", [geoIp(true)]);
    const inSync = desiredFamily("1", "pipeline_frontend_apps_configs", []);
    expect(counts([drifting, inSync], "warn")).toEqual([
      "plugin_configs=1",
      "pipeline_frontend_apps_configs=0",
    ]);
    expect(counts([drifting, inSync], "heal")).toEqual(["pipeline_frontend_apps_configs=0"]);
    // The family's own `drift:` wins over --mode, both ways.
    expect(counts([{ ...drifting, drift: "warn" }, inSync], "heal")).toEqual([
      "plugin_configs=1",
      "pipeline_frontend_apps_configs=0",
    ]);
    expect(counts([{ ...drifting, drift: "heal" }, inSync], "warn")).toEqual([
      "pipeline_frontend_apps_configs=0",
    ]);
  });

  it("shows nothing of a project whose plan has errors (the cycle makes no plan)", () => {
    // Two configs with one name and no id, against one record: a plan error.
    const twice = desiredFamily("1", "plugin_configs", [geoIp(true), geoIp(false)]);
    const part = planProject("1", [twice], [remote, apps]);
    expect(part.errors.length).toBeGreaterThan(0);
    expect(earlyDriftOf(part, [twice], "warn").size).toBe(0);
  });
});

describe("CycleRecorder with drift shown during a cycle", () => {
  const report = (over: Partial<CycleReport>): CycleReport => ({
    result: "ok",
    manifestValid: true,
    problems: [],
    findings: [],
    succeeded: [],
    healed: 0,
    refused: 0,
    interrupted: false,
    ...over,
  });
  const shown = (project: string, changes: number) =>
    new Map([[`${project}\u0000plugin_configs`, { project, family: "plugin_configs" as const, changes }]]);

  it("gives the projects a failed cycle read and planned their last success: one unreachable project does not hold back the others'", async () => {
    const metrics = createWatchMetrics({ processMetrics: false });
    const recorder = new CycleRecorder(metrics);
    const lastSuccess = async (project: string) =>
      metricValue(await renderOwnMetrics(metrics), "pcsync_last_success_timestamp_seconds", { project });
    recorder.showProjectDrift(shown("1", 0));
    recorder.record(report({ result: "failed", problems: ["project 2: 403"] }), 10, new Date(1_000_000));
    expect(await lastSuccess("1")).toBe(1000);
    expect(await lastSuccess("2")).toBeUndefined();
    // The next failed cycle, which planned nothing before it failed, moves no project's time.
    recorder.record(report({ result: "failed", problems: ["unreachable"] }), 10, new Date(2_000_000));
    expect(await lastSuccess("1")).toBe(1000);
  });

  it("keeps what a failed cycle showed, and removes a family that left the manifest at the next cycle's end", async () => {
    const metrics = createWatchMetrics({ processMetrics: false });
    const recorder = new CycleRecorder(metrics);
    const gauge = async (project: string) =>
      metricValue(await renderOwnMetrics(metrics), DRIFT, { project, family: "plugin_configs" });

    // Cycle 1 shows project 9 (new in the manifest), then fails at another project's read.
    recorder.showProjectDrift(shown("9", 4));
    expect(await gauge("9")).toBe(4);
    recorder.record(report({ result: "failed", problems: ["project 2: unreachable"] }), 10, new Date());
    expect(await gauge("9")).toBe(4);

    // Cycle 2: project 9 has left the manifest; the cycle's end removes the series it never recorded.
    recorder.showProjectDrift(shown("1", 0));
    const inSync = { project: "1", family: "plugin_configs" as const, changes: [], reorder: undefined };
    recorder.record(report({ findings: [inSync], succeeded: ["1"] }), 10, new Date());
    expect(await gauge("9")).toBeUndefined();
    expect(await gauge("1")).toBe(0);
  });
});
