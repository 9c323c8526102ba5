// E2E: `pcsync watch` as an operator runs it, the built CLI against the emulator: a watcher that
// lives through drift, a broken manifest, heal, the service down and back, SIGHUP and SIGTERM, with
// a real webhook receiver; and `--once` for cron, with its exit codes and metrics file.

import { createHmac } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBuiltCli } from "../support/cli.js";
import { manifest } from "../support/manifest-text.js";
import { expectNoSecret } from "../support/output-checks.js";
import { API_KEY, openServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { metricValue, startWatcher, writeSettled } from "../support/watcher.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

/** Project 1's GeoIP, as the seed profile holds it: in sync. */
function geoIp(options: { drift?: "warn" | "heal"; enabled?: boolean } = {}): string {
  return manifest(
    "version: 1",
    "projects:",
    '  "1":',
    "    plugin_configs:",
    ...(options.drift === undefined ? [] : [`      drift: ${options.drift}`]),
    "      configs:",
    "        - name: GeoIP",
    "          plugin: 1",
    `          enabled: ${options.enabled ?? true}`,
  );
}

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on port 0 that records what it gets and answers 200. */
async function openReceiver(onFinished: (handler: () => Promise<void>) => void) {
  const deliveries: Delivery[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      deliveries.push({ headers: request.headers, body });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onFinished(() => new Promise((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const events = () => deliveries.map((delivery) => JSON.parse(delivery.body) as { event: string });
  return { url: `http://127.0.0.1:${port}/hooks/pcsync`, deliveries, events };
}

describe("pcsync watch, running", { timeout: 90_000, concurrent: true }, () => {
  // The context's expect: its polls belong to this test while the --once tests run beside it.
  it("reports drift, refuses a broken manifest, heals, survives the service going down, and stops on SIGTERM", async ({
    onTestFinished,
    expect,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openReceiver(onTestFinished);
    const file = join(directory, "running.yaml");
    const secretFile = join(directory, "webhook-secret");
    await writeSettled(file, geoIp());
    await writeSettled(secretFile, "hush-hush-secret\n");
    // A long interval: every cycle after the first is started by SIGHUP, so each step is known.
    // Each version is written whole before its SIGHUP and used as read (--manifest-settle 0); the
    // settle itself is tested in watch-settle.test.ts.
    const watcher = await startWatcher(
      [
        "-f",
        file,
        "--interval",
        "1h",
        "--manifest-settle",
        "0",
        "--webhook",
        receiver.url,
        "--webhook-secret-file",
        secretFile,
      ],
      // The client's durations a tenth as long, in proportion: the cycle that finds the service
      // down waits out its retries' backoff.
      { env: { ...server.env, PCSYNC_TIME_SCALE: "0.1" } },
    );
    onTestFinished(async () => {
      watcher.signal("SIGKILL");
      await watcher.done;
    });
    expect((await watcher.cycles(1))[0]).toMatch(/cycle 1 ok in .*1 family, 0 drifting/);
    expect((await watcher.get("/readyz")).status).toBe(200);

    // Drift made out of band: reported once, in the metric and by a signed event.
    const [record] = (await server.list(1, "plugin_configs")).filter((entry) => entry.name === "GeoIP");
    await server.call("PATCH", `/api/projects/1/plugin_configs/${record?.id}/`, { enabled: false });
    watcher.signal("SIGHUP");
    expect((await watcher.cycles(2))[1]).toMatch(/cycle 2 ok .*1 drifting \(1 change\)/);
    // The line names what drifts.
    expect(watcher.soFar().stdout).toMatch(/\n {2}drift in project 1 plugin_configs: ~ "GeoIP" \(id \d+\)\n/);
    const metrics = (await watcher.get("/metrics")).text;
    expect(metricValue(metrics, "pcsync_drift_changes", { project: "1", family: "plugin_configs" })).toBe(1);
    expect(metricValue(metrics, "pcsync_cycles_total", { result: "ok" })).toBe(2);
    expect(metrics).toContain("process_cpu_user_seconds_total");
    await expect.poll(() => receiver.events().map((event) => event.event)).toEqual(["drift_opened"]);
    const opened = receiver.deliveries[0];
    expect(opened?.headers["x-pcsync-signature"]).toBe(
      `sha256=${createHmac("sha256", "hush-hush-secret")
        .update(opened?.body ?? "")
        .digest("hex")}`,
    );
    expect(JSON.parse(opened?.body ?? "{}")).toMatchObject({
      event: "drift_opened",
      project: "1",
      family: "plugin_configs",
      summary: { create: 0, update: 1, delete: 0, reorder: 0 },
      changes: [{ action: "update", name: "GeoIP", fields: { enabled: { from: false, to: true } } }],
    });

    // A broken manifest: no request at all, manifest_valid 0, one event naming file:line.
    await writeSettled(file, `${geoIp()}          enabeld: true\n`);
    const requestsBefore = server.emulator.requestLog.length;
    watcher.signal("SIGHUP");
    expect((await watcher.cycles(3))[2]).toMatch(/cycle 3 invalid_manifest/);
    expect(server.emulator.requestLog.length).toBe(requestsBefore);
    expect(metricValue((await watcher.get("/metrics")).text, "pcsync_manifest_valid")).toBe(0);
    await expect.poll(() => receiver.events().length).toBe(2);
    const invalid = JSON.parse(receiver.deliveries[1]?.body ?? "{}") as { event: string; message: string };
    expect(invalid.event).toBe("manifest_invalid");
    expect(invalid.message).toContain(`${file}:9:11: unknown key "enabeld"`);

    // The next valid version resumes; its family says heal, which wins over --mode warn.
    await writeSettled(file, geoIp({ drift: "heal" }));
    watcher.signal("SIGHUP");
    expect((await watcher.cycles(4))[3]).toMatch(/cycle 4 ok .*0 drifting \(0 changes\): 1 healed/);
    expect((await server.list(1, "plugin_configs")).find((entry) => entry.name === "GeoIP")?.enabled).toBe(
      true,
    );
    const healedMetrics = (await watcher.get("/metrics")).text;
    expect(metricValue(healedMetrics, "pcsync_manifest_valid")).toBe(1);
    expect(metricValue(healedMetrics, "pcsync_heals_total", { project: "1", family: "plugin_configs" })).toBe(
      1,
    );
    expect(
      metricValue(healedMetrics, "pcsync_drift_changes", { project: "1", family: "plugin_configs" }),
    ).toBe(0);
    await expect
      .poll(() =>
        receiver
          .events()
          .map((event) => event.event)
          .slice(2),
      )
      .toEqual(["healed", "drift_resolved"]);

    // The service down for a cycle: counted as failed, still healthy; the next cycle recovers.
    server.emulator.setFaults({ fail503Rate: 1 });
    watcher.signal("SIGHUP");
    expect((await watcher.cycles(5))[4]).toMatch(/cycle 5 failed/);
    const down = (await watcher.get("/metrics")).text;
    expect(metricValue(down, "pcsync_cycles_total", { result: "failed" })).toBe(1);
    expect(metricValue(down, "pcsync_requests_total", { method: "GET", status: "503" })).toBeGreaterThan(0);
    expect((await watcher.get("/healthz")).status).toBe(200);
    server.emulator.setFaults({});
    watcher.signal("SIGHUP");
    expect((await watcher.cycles(6))[5]).toMatch(/cycle 6 ok/);
    await expect
      .poll(() =>
        receiver
          .events()
          .map((event) => event.event)
          .slice(4),
      )
      .toEqual(["cycle_failed"]);

    watcher.signal("SIGTERM");
    const result = await watcher.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /stopped by SIGTERM after 6 cycles \(4 ok, 1 failed, 0 guarded, 1 invalid_manifest\); 1 change healed; webhook events: 5 delivered/,
    );
    expectNoSecret(result, API_KEY);
    for (const delivery of receiver.deliveries) expect(delivery.body).not.toContain(API_KEY);
  });
});

describe.concurrent("pcsync watch --once", { timeout: 90_000 }, () => {
  it("exits as plan --detailed-exitcode: 0 in sync, 2 on drift, 1 on an invalid manifest", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const inSync = join(directory, "once-in-sync.yaml");
    const drifted = join(directory, "once-drift.yaml");
    const broken = join(directory, "once-broken.yaml");
    await writeSettled(inSync, geoIp());
    await writeSettled(drifted, geoIp({ enabled: false }));
    await writeSettled(broken, "version: 1\nprojects: []\n");
    const metricsFile = join(directory, "pcsync.prom");
    const [ok, drift, invalid] = await Promise.all([
      runBuiltCli(["watch", "--once", "-f", inSync, "--metrics-file", metricsFile], {
        env: server.env,
        timeoutMs: 60_000,
      }),
      runBuiltCli(["watch", "--once", "-f", drifted, "--log-format", "json"], {
        env: server.env,
        timeoutMs: 60_000,
      }),
      runBuiltCli(["watch", "--once", "-f", broken], { env: server.env, timeoutMs: 60_000 }),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe("");
    expect(drift.code).toBe(2);
    expect(JSON.parse(drift.stdout)).toMatchObject({
      msg: "cycle",
      result: "ok",
      drifting: 1,
      changes: 1,
      drift: [
        {
          project: "1",
          family: "plugin_configs",
          changes: 1,
          moved: 0,
          records: [{ action: "update", name: "GeoIP", id: expect.any(Number) }],
        },
      ],
    });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/cycle 1 invalid_manifest/);
    const { stat } = await import("node:fs/promises");
    const text = await readFile(metricsFile, "utf8");
    expect(metricValue(text, "pcsync_drift_changes", { project: "1", family: "plugin_configs" })).toBe(0);
    // node_exporter has process metrics of its own: the textfile must not repeat them.
    expect(text).not.toContain("process_");
    expect((await stat(metricsFile)).mode & 0o777).toBe(0o600);
  });

  it("keeps the newest --keep-heal-journals heal journals, each one rollback can undo", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const work = await temporaryDirectory();
    onTestFinished(() => work.remove());
    const file = join(work.path, "pcsync.yaml");
    await writeSettled(file, geoIp());
    const [geoip] = (await server.list(1, "plugin_configs")).filter((record) => record.name === "GeoIP");
    const journals: string[] = [];
    for (const enabled of [false, true, false]) {
      // Drift: the manifest says enabled; someone else turns it off (or the heal before turned it on).
      await server.call("PATCH", `/api/projects/1/plugin_configs/${geoip?.id}/`, { enabled: !enabled });
      await writeSettled(file, geoIp({ enabled }));
      const healed = await runBuiltCli(
        ["watch", "--once", "--mode", "heal", "-f", file, "--keep-heal-journals", "2"],
        { env: server.env, cwd: work.path, timeoutMs: 60_000 },
      );
      expect(healed.code, healed.stderr).toBe(0);
      const journal = /\.pcsync\/journal\/\S+-heal\.jsonl/.exec(`${healed.stdout}${healed.stderr}`)?.[0];
      expect(journal, healed.stdout).toBeDefined();
      journals.push(journal ?? "");
    }
    // Heals that change nothing (a create of a plugin the service does not have fails every
    // time) leave no journal and name none: they do not push the last real heal's undo out.
    await writeSettled(
      file,
      `${geoIp({ enabled: false })}        - name: No Such Plugin\n          plugin: 999\n`,
    );
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const failed = await runBuiltCli(
        ["watch", "--once", "--mode", "heal", "-f", file, "--keep-heal-journals", "2"],
        { env: server.env, cwd: work.path, timeoutMs: 60_000 },
      );
      expect(failed.code, failed.stderr).toBe(1);
      expect(`${failed.stdout}${failed.stderr}`).toContain("No Such Plugin");
      expect(`${failed.stdout}${failed.stderr}`).not.toMatch(/-heal\.jsonl/);
    }
    const left = (await readdir(join(work.path, ".pcsync", "journal"))).filter((name) =>
      name.endsWith(".jsonl"),
    );
    expect(left.map((name) => `.pcsync/journal/${name}`).sort()).toEqual(journals.slice(1).sort());
    // The newest heal is undone by its journal: GeoIP is enabled again, as before it.
    const undone = await runBuiltCli(["rollback", "--journal", journals[2] ?? "", "--auto-approve"], {
      env: server.env,
      cwd: work.path,
    });
    expect(undone.code, undone.stderr).toBe(0);
    const [after] = (await server.list(1, "plugin_configs")).filter((record) => record.name === "GeoIP");
    expect(after?.enabled).toBe(true);
    const bad = await runBuiltCli(["watch", "--once", "-f", file, "--keep-heal-journals", "-1"], {
      env: server.env,
      cwd: work.path,
    });
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'pcsync: --keep-heal-journals must be a whole number ≥ 0 (0: keep all), not "-1"\n',
    ]);
  });

  it("heals in heal mode (exit 0 once in sync), and exits 3 when a guard refuses, writing nothing", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const drifted = join(directory, "heal-drift.yaml");
    const emptying = join(directory, "heal-guarded.yaml");
    await writeSettled(drifted, geoIp({ enabled: false }));
    await writeSettled(
      emptying,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      prune: true",
        "      configs: []",
      ),
    );
    const healed = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", drifted], {
      env: server.env,
      timeoutMs: 60_000,
    });
    expect(healed.code).toBe(0);
    expect(healed.stdout).toMatch(/cycle 1 ok .*0 drifting .*1 healed/);
    const before = server.emulator.snapshot().records;
    const refused = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", emptying], {
      env: server.env,
      timeoutMs: 60_000,
    });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/cycle 1 guarded .*1 refused by a guard/);
    expect(server.emulator.snapshot().records).toEqual(before);

    // --target heals only the records it names; --exclude leaves them out of what is reported.
    const two = join(directory, "heal-targeted.yaml");
    await writeSettled(
      two,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1, enabled: true }",
        "        - { name: Property Filter, plugin: 2, enabled: true, description: Targeted }",
      ),
    );
    // The heal above left GeoIP disabled: both configs drift.
    const targeted = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", two, "--target", "Geo*"], {
      env: server.env,
      timeoutMs: 60_000,
    });
    expect(targeted.code).toBe(0);
    expect(targeted.stdout).toMatch(/cycle 1 ok .*1 healed/);
    const after = await server.list(1, "plugin_configs");
    expect(after.find((record) => record.name === "GeoIP")?.enabled).toBe(true);
    expect(after.find((record) => record.name === "Property Filter")?.description).not.toBe("Targeted");
    const excluded = await runBuiltCli(
      ["watch", "--once", "-f", two, "--exclude", "GeoIP", "--log-format", "json"],
      {
        env: server.env,
        timeoutMs: 60_000,
      },
    );
    expect(excluded.code).toBe(2);
    expect(JSON.parse(excluded.stdout)).toMatchObject({ result: "ok", drifting: 1, changes: 1, healed: 0 });
  });
  it("refuses only the family whose config matches another owner's record; heals the others", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const receiver = await openReceiver(onTestFinished);
    const marked = await server.call("PATCH", "/api/projects/1/plugin_configs/1/", {
      description: "theirs\n\n[pcsync owner=team-a]",
    });
    expect(marked.status).toBe(200);
    const file = join(directory, "owner-conflict.yaml");
    const config = [
      "    plugin_configs:",
      "      configs:",
      "        - name: GeoIP",
      "          plugin: 1",
      "          enabled: false",
    ];
    await writeSettled(
      file,
      manifest("version: 1", "owner: team-b", "projects:", '  "1":', ...config, '  "2":', ...config),
    );
    const metricsFile = join(directory, "owner-conflict.prom");
    const run = await runBuiltCli(
      [
        "watch",
        "--once",
        "--mode",
        "heal",
        "-f",
        file,
        "--metrics-file",
        metricsFile,
        "--webhook",
        receiver.url,
      ],
      { env: server.env, timeoutMs: 60_000 },
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toMatch(/cycle 1 guarded .*1 healed.*1 refused by a guard/);
    const records = server.emulator.snapshot().records;
    expect(records.find((record) => record.id === 1)?.enabled).toBe(true);
    expect(records.find((record) => record.id === 5)?.enabled).toBe(false);
    const text = await readFile(metricsFile, "utf8");
    expect(metricValue(text, "pcsync_cycles_total", { result: "guarded" })).toBe(1);
    expect(metricValue(text, "pcsync_cycles_total", { result: "failed" })).toBe(0);
    const events = receiver.events() as { event: string; project: string; message?: string }[];
    expect(events.find((event) => event.event === "guard_refused")).toMatchObject({
      project: "1",
      message: expect.stringContaining("team-a"),
    });
    expect(events.find((event) => event.event === "healed")).toMatchObject({ project: "2" });
  });

  it("--once exits 3 when a guard refuses one family, after healing the others, and says so in --help", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const configs = (count: number) =>
      Array.from(
        { length: count },
        (_, index) => `        - { name: cfg ${index + 1}, plugin: 2, enabled: true }`,
      );
    const twelve = join(directory, "guard-partial-setup.yaml");
    await writeSettled(
      twelve,
      manifest("version: 1", "projects:", '  "3":', "    plugin_configs:", "      configs:", ...configs(12)),
    );
    const setup = await runBuiltCli(["apply", "--auto-approve", "--no-journal", "-f", twelve], {
      env: server.env,
      timeoutMs: 60_000,
    });
    expect(setup.code, setup.stderr).toBe(0);
    // Project 2's GeoIP heals; project 3's prune would delete 6 of its 12 records: the guard refuses.
    const file = join(directory, "guard-partial.yaml");
    await writeSettled(
      file,
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1, enabled: false }",
        '  "3":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        ...configs(6),
      ),
    );
    const run = await runBuiltCli(["watch", "--once", "--mode", "heal", "-f", file], {
      cwd: directory,
      env: server.env,
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toMatch(
      /cycle 1 guarded .*: 1 healed \(journal [^)]+-heal\.jsonl\): 1 refused by a guard/,
    );
    expect(run.stdout).toMatch(/refused in project 3 plugin_configs: .*prune would delete 6 of 12 records/);
    expect((await server.list(2, "plugin_configs")).find((record) => record.name === "GeoIP")?.enabled).toBe(
      false,
    );
    expect(await server.list(3, "plugin_configs")).toHaveLength(12);
    // The code's meaning, as help gives it, says what was written: not "nothing".
    const help = await runBuiltCli(["watch", "--help"]);
    const three = help.stdout.split("\n").find((line) => /^ {2}3 {2}/.test(line));
    expect(three).toContain("refused to heal a family, which got no write; the other families were healed");
    expect(three).not.toContain("nothing was written");
  });
});

describe("a watcher whose server is named only by the manifest (server.base_url)", () => {
  it("shows the manifest's own problems when it does not load at the start, and does not follow the manifest to another server", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const other = await openServer(onTestFinished, "seed");
    const work = await temporaryDirectory();
    onTestFinished(() => work.remove());
    const file = join(work.path, "pcsync.yaml");
    const named = (url: string, enabled = "enabled") =>
      geoIp()
        .replace("version: 1\n", `version: 1\nserver:\n  base_url: ${url}\n`)
        .replace("enabled:", `${enabled}:`);
    const env = { PCSYNC_API_KEY: API_KEY, PCSYNC_BASE_URL: undefined };

    // A typo beside server.base_url: the typo is what is said, not "no server given".
    await writeSettled(file, named(server.emulator.url, "enabld"));
    const invalid = await runBuiltCli(["watch", "--once", "-f", file], { env, cwd: work.path });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/pcsync\.yaml:\d+:\d+: unknown key "enabld"/);
    expect(invalid.stderr).not.toContain("no server given");

    // Started against the first server; the manifest then names the second: nothing is read
    // from either until it names the first again.
    await writeSettled(file, named(server.emulator.url));
    const watcher = await startWatcher(["-f", file, "--interval", "1s", "--manifest-settle", "0"], {
      env,
      cwd: work.path,
    });
    onTestFinished(() => {
      watcher.signal("SIGKILL");
    });
    await watcher.cycles(1);
    await writeSettled(file, named(other.emulator.url));
    await waitFor(() => watcher.soFar().stdout.includes("server.base_url is now"), "the refusal", 30_000);
    const before = other.emulator.requestLog.length;
    const cycles = (await watcher.cycles(1)).length;
    await watcher.cycles(cycles + 1);
    expect(watcher.soFar().stdout).toContain(
      `the manifest's server.base_url is now ${other.emulator.url}, but this watcher connected to ${server.emulator.url} when it started: nothing is read or healed until it is restarted`,
    );
    expect(other.emulator.requestLog.length).toBe(before);
    expect(before).toBe(0);
    // A URL with credentials (which pcsync refuses) is shown without them, in the log as anywhere.
    await writeSettled(file, named("http://admin:hunter2@127.0.0.1:1"));
    await waitFor(() => watcher.soFar().stdout.includes("one pcsync cannot use"), "the refusal", 30_000);
    expect(`${watcher.soFar().stdout}${watcher.soFar().stderr}`).not.toContain("hunter2");
    // The same server spelled with a trailing slash is the same server: cycles are ok again.
    await writeSettled(file, named(`${server.emulator.url}/`));
    const ok = (await watcher.cycles(1)).length;
    await waitFor(
      () => (watcher.soFar().stdout.match(/cycle \d+ ok/g) ?? []).length >= 2,
      "a cycle ok again",
      30_000,
    );
    expect(ok).toBeGreaterThan(0);
    watcher.signal("SIGTERM");
    expect((await watcher.done).code).toBe(0);
  });
});
