// The logs gate's rule on a project's counts: the ERROR share against max_error_ratio, and too few
// entries as unknown, which fails unless allowed; and its reads of the emulator's logs endpoint.

import { describe, expect, it } from "vitest";
import { ApiClient, updateConfig } from "../../src/api/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import type { LogHealthSpec } from "../../src/manifest/types.js";
import { createLogHealthGate, judgeCounts } from "../../src/rollout/log-health.js";

const KEY = "phx_log_health_0123456789";

const spec = { maxErrorRatio: 0.05, minEntries: 20, allowUnknown: false };

describe("the logs gate", () => {
  it.each([
    [{ entries: 100, errors: 5 }, spec, "pass", true],
    [{ entries: 100, errors: 6 }, spec, "fail", false],
    [{ entries: 19, errors: 0 }, spec, "unknown", false],
    [{ entries: 19, errors: 19 }, { ...spec, allowUnknown: true }, "unknown", true],
    [{ entries: 0, errors: 0 }, { ...spec, minEntries: 0 }, "pass", true],
    [{ entries: 20, errors: 20 }, { ...spec, maxErrorRatio: 1 }, "pass", true],
  ] as const)("%o under %o is %s", (counts, rule, status, passed) => {
    const verdict = judgeCounts("1", 2, counts, rule);
    expect(verdict).toMatchObject({ project: "1", status, passed });
    expect(verdict.summary).toContain(`${counts.errors} ERROR of ${counts.entries} entries`);
  });
});

/** An emulator whose plugin configs log `perMinute` entries, half ERROR once BROKEN; config 1 changed. */
async function brokenConfig(perMinute: number, onFinished: (done: () => Promise<void>) => void) {
  const emulator = await startEmulator({
    profile: "seed",
    keys: [{ key: KEY, scopes: null, projects: "*" }],
    logRate: perMinute,
    faults: { logErrors: [{ description: "BROKEN", ratio: 0.5 }] },
  });
  onFinished(() => emulator.close());
  const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
  const changed = await updateConfig(client, "1", "plugin_configs", 1, { description: "BROKEN build" });
  expect(changed.description).toBe("BROKEN build");
  // After the change's own time, whatever precision the service gives updated_at.
  const since = new Date();
  const gate = createLogHealthGate(client, { ...spec, minEntries: 1 }, 4);
  return {
    logReads: () => emulator.requestLog.filter((entry) => entry.path.includes("/logs")).length,
    judge: () =>
      gate.judge(
        {
          wave: "canary",
          since,
          projects: [
            {
              project: "1",
              configs: [
                {
                  family: "plugin_configs",
                  id: 1,
                  name: "GeoIP",
                  enabled: true,
                  frontendApp: false,
                  writtenAt: since,
                },
              ],
            },
          ],
        },
        new AbortController().signal,
      ),
  };
}

describe("the logs gate against the emulator", () => {
  it("passes a project whose wave created or updated no plugin config, and says so, reading no logs", async ({
    onTestFinished,
  }) => {
    const emulator = await startEmulator({
      profile: "seed",
      keys: [{ key: KEY, scopes: null, projects: "*" }],
    });
    onTestFinished(() => emulator.close());
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    const verdicts = await createLogHealthGate(client, spec, 4).judge(
      { wave: "canary", since: new Date(), projects: [{ project: "1", configs: [] }] },
      new AbortController().signal,
    );
    expect(verdicts).toEqual([
      expect.objectContaining({
        project: "1",
        passed: true,
        summary:
          "nothing to judge: the wave created or updated no plugin config here (frontend apps and deletes have no logs)",
      }),
    ]);
    expect(emulator.requestLog).toEqual([]);
  });

  it("does not judge a config the wave left disabled (it logs nothing), and says so", async ({
    onTestFinished,
  }) => {
    // Busy plugins: an enabled config has entries to judge within a few milliseconds.
    const emulator = await startEmulator({
      profile: "seed",
      keys: [{ key: KEY, scopes: null, projects: "*" }],
      logRate: 60_000,
    });
    onTestFinished(() => emulator.close());
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    const since = new Date();
    const off = await updateConfig(client, "1", "plugin_configs", 2, { enabled: false });
    expect(off.enabled).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const disabled = {
      family: "plugin_configs" as const,
      id: 2,
      name: off.name,
      enabled: false,
      frontendApp: false,
      writtenAt: since,
    };
    const enabled = {
      family: "plugin_configs" as const,
      id: 1,
      name: "GeoIP",
      enabled: true,
      frontendApp: false,
      writtenAt: since,
    };
    const gate = createLogHealthGate(client, { ...spec, minEntries: 1 }, 4);
    const verdicts = await gate.judge(
      {
        wave: "canary",
        since,
        projects: [
          { project: "1", configs: [disabled] },
          {
            project: "2",
            configs: [
              { ...disabled, id: 5 },
              { ...disabled, id: 6 },
            ],
          },
        ],
      },
      new AbortController().signal,
    );
    expect(verdicts).toEqual([
      expect.objectContaining({
        project: "1",
        status: "nothing_to_judge",
        passed: true,
        summary:
          "nothing to judge: the plugin config the wave created or updated here is disabled (a disabled plugin logs nothing)",
      }),
      expect.objectContaining({
        project: "2",
        status: "nothing_to_judge",
        summary:
          "nothing to judge: the plugin configs the wave created or updated here are disabled (a disabled plugin logs nothing)",
      }),
    ]);
    expect(emulator.requestLog.filter((entry) => entry.path.includes("/logs"))).toEqual([]);

    // Beside an enabled one, it is left out of the figures, and the verdict says so.
    const [mixed] = await gate.judge(
      { wave: "canary", since, projects: [{ project: "1", configs: [enabled, disabled] }] },
      new AbortController().signal,
    );
    expect(mixed).toMatchObject({ status: "pass", passed: true, figures: { configs: 1 } });
    expect(mixed?.summary).toMatch(/from 1 plugin config: .*; 1 disabled, not judged \(logs nothing\)$/);
    const logReads = emulator.requestLog.filter((entry) => entry.path.includes("/logs"));
    expect(logReads.length).toBeGreaterThan(0);
    expect(logReads.every((entry) => entry.path.includes("/plugin_configs/1/logs"))).toBe(true);
  });

  it("does not judge a frontend app that plugin_configs also lists (it has no logs), and says so", async ({
    onTestFinished,
  }) => {
    const emulator = await startEmulator({
      profile: "posthog-2024",
      keys: [{ key: KEY, scopes: null, projects: "*" }],
      logRate: 60_000,
    });
    onTestFinished(() => emulator.close());
    const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
    const since = new Date();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Project 1's Notification Bar (id 4), managed under plugin_configs, which lists it too.
    const app = {
      family: "plugin_configs" as const,
      id: 4,
      name: "Notification Bar",
      enabled: true,
      frontendApp: true,
      writtenAt: since,
    };
    const geoip = { ...app, id: 1, name: "GeoIP", frontendApp: false };
    const gate = createLogHealthGate(client, { ...spec, minEntries: 1 }, 4);
    const verdicts = await gate.judge(
      {
        wave: "canary",
        since,
        projects: [
          { project: "1", configs: [app] },
          {
            project: "2",
            configs: [app, { ...app, id: 9 }, { ...app, id: 10, enabled: false, frontendApp: false }],
          },
        ],
      },
      new AbortController().signal,
    );
    expect(verdicts).toEqual([
      {
        project: "1",
        status: "nothing_to_judge",
        passed: true,
        figures: {},
        summary:
          "nothing to judge: the plugin config the wave created or updated here is a frontend app (frontend apps run in the browser and have no logs)",
      },
      expect.objectContaining({
        project: "2",
        status: "nothing_to_judge",
        summary:
          "nothing to judge: of the plugin configs the wave created or updated here, 2 are frontend apps (no logs) and 1 is disabled (a disabled plugin logs nothing)",
      }),
    ]);
    expect(emulator.requestLog.filter((entry) => entry.path.includes("/logs"))).toEqual([]);

    // Beside a config that logs, it is left out of the figures, and the verdict says so.
    const [mixed] = await gate.judge(
      { wave: "canary", since, projects: [{ project: "1", configs: [geoip, app] }] },
      new AbortController().signal,
    );
    expect(mixed).toMatchObject({ status: "pass", passed: true, figures: { configs: 1 } });
    expect(mixed?.summary).toMatch(/from 1 plugin config: .*; 1 frontend app, not judged \(no logs\)$/);
    const logReads = emulator.requestLog.filter((entry) => entry.path.includes("/logs"));
    expect(logReads.length).toBeGreaterThan(0);
    expect(logReads.every((entry) => entry.path.includes("/plugin_configs/1/logs"))).toBe(true);
  });

  it("counts a bake's entries from one page per config", async ({ onTestFinished }) => {
    // 100 entries a second: a page of 200 holds what 0.3 s of bake logged, even on a loaded machine.
    const config = await brokenConfig(6_000, onTestFinished);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [verdict] = await config.judge();
    expect(config.logReads()).toBe(1);
    expect(verdict?.figures.entries).toBeGreaterThan(0);
    expect(verdict?.figures.entries).toBeLessThanOrEqual(200);
    expect(verdict?.figures.errors).toBeGreaterThan(0);
    expect(verdict?.passed).toBe(false);
  });

  it("asks for the ERROR count in a second read only when the page does not hold every entry", async ({
    onTestFinished,
  }) => {
    // 1,000 entries a second: half a second is more than a page.
    const config = await brokenConfig(60_000, onTestFinished);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [verdict] = await config.judge();
    expect(config.logReads()).toBe(2);
    expect(verdict?.figures.entries).toBeGreaterThan(200);
    expect(verdict?.figures.ratio).toBeGreaterThan(0.4);
    expect(verdict?.figures.ratio).toBeLessThan(0.6);
    expect(verdict?.status).toBe("fail");
  });
});

/** Ahead of this machine's clock by more than any bake a test waits out. */
const SERVICE_AHEAD_MS = 5 * 60_000;

/**
 * An emulator whose clock is SERVICE_AHEAD_MS ahead of this machine's, whose plugin configs log
 * `perMinute` entries (half ERROR once BROKEN); config 1's description set to `description`, and
 * judged from its `updated_at`, as the rollout judges it.
 */
async function onServiceAhead(
  description: string,
  perMinute: number,
  rule: LogHealthSpec,
  onFinished: (done: () => Promise<void>) => void,
) {
  const emulator = await startEmulator({
    profile: "seed",
    keys: [{ key: KEY, scopes: null, projects: "*" }],
    logRate: perMinute,
    faults: { logErrors: [{ description: "BROKEN", ratio: 0.5 }] },
    now: () => Date.now() + SERVICE_AHEAD_MS,
  });
  onFinished(() => emulator.close());
  const client = new ApiClient({ baseUrl: emulator.url, apiKey: KEY });
  const changed = await updateConfig(client, "1", "plugin_configs", 1, { description });
  const writtenAt = new Date(String(changed.updated_at));
  expect(writtenAt.getTime()).toBeGreaterThan(Date.now() + SERVICE_AHEAD_MS / 2);
  const gate = createLogHealthGate(client, rule, 4);
  return {
    logReads: () => emulator.requestLog.filter((entry) => entry.path.includes("/logs")),
    judge: () =>
      gate.judge(
        {
          wave: "canary",
          since: new Date(),
          projects: [
            {
              project: "1",
              configs: [
                {
                  family: "plugin_configs",
                  id: 1,
                  name: "GeoIP",
                  enabled: true,
                  frontendApp: false,
                  writtenAt,
                },
              ],
            },
          ],
        },
        new AbortController().signal,
      ),
  };
}

describe("the logs gate on a service whose clock is ahead of this machine's", () => {
  it("judges a healthy change on what it logged: not unknown, not rolled back", async ({
    onTestFinished,
  }) => {
    const config = await onServiceAhead("v2", 6_000, { ...spec, minEntries: 1 }, onTestFinished);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [verdict] = await config.judge();
    expect(verdict?.figures.entries).toBeGreaterThan(0);
    expect(verdict).toMatchObject({ status: "pass", passed: true, figures: { errors: 0 } });
  });

  it("fails a broken change that allow_unknown would have let pass on no entries", async ({
    onTestFinished,
  }) => {
    const config = await onServiceAhead(
      "BROKEN build",
      6_000,
      { ...spec, minEntries: 1, allowUnknown: true },
      onTestFinished,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [verdict] = await config.judge();
    expect(verdict?.figures.errors).toBeGreaterThan(0);
    expect(verdict).toMatchObject({ status: "fail", passed: false });
  });

  it("counts both reads of a busy config on the service's clock, over the same entries", async ({
    onTestFinished,
  }) => {
    // 1,000 entries a second: half a second is more than a page.
    const config = await onServiceAhead("BROKEN build", 60_000, { ...spec, minEntries: 1 }, onTestFinished);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [verdict] = await config.judge();
    const reads = config.logReads().map((entry) => new URL(entry.path, "http://service").searchParams);
    expect(reads).toHaveLength(2);
    // The first read ends where the service's clock says now; the second, just after the newest
    // entry the first one saw: both are later than this machine's clock.
    expect(reads[0]?.has("before")).toBe(false);
    expect(Date.parse(reads[1]?.get("before") ?? "")).toBeGreaterThan(Date.now() + SERVICE_AHEAD_MS / 2);
    expect(verdict?.figures.entries).toBeGreaterThan(200);
    expect(verdict?.figures.ratio).toBeGreaterThan(0.4);
    expect(verdict?.figures.ratio).toBeLessThan(0.6);
    expect(verdict?.status).toBe("fail");
  });
});
