// End to end: `pcsync serve` with its log stream and log-error fault, read with `pcsync logs`, both
// built and run as a user runs them.

import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { PROFILE_NAMES } from "../../src/emulator/index.js";
import { type CliRun, runBuiltCli, spawnCli } from "../support/cli.js";

const KEY = "log-stream-key";

/**
 * `pcsync serve` on a free port with the given flags, once it listens; stopped (SIGTERM) when the
 * test finishes, so that the tests, each with a server of its own, run at once.
 */
async function serve(onFinished: (done: () => Promise<void>) => void, flags: string[]): Promise<string> {
  const { child, done } = spawnCli(["serve", "--port", "0", "--quiet", "--key", KEY, ...flags], {
    timeoutMs: 60_000,
  });
  onFinished(async () => {
    child.kill("SIGTERM");
    await done;
  });
  return await new Promise<string>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    void done.then((run) => reject(new Error(`serve exited early (code ${run.code}): ${run.stderr}`)));
  });
}

async function call(
  url: string,
  method: string,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

function logs(url: string, args: string[]): Promise<CliRun> {
  return runBuiltCli(["logs", "--project", "1", "--format", "json", ...args], {
    env: { PCSYNC_BASE_URL: url, PCSYNC_API_KEY: KEY },
  });
}

function entriesOf(run: CliRun): { type: string; timestamp: string; source: string }[] {
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return run.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { type: string; timestamp: string; source: string });
}

describe.concurrent.each(PROFILE_NAMES)("pcsync serve's log stream (%s profile)", (profile) => {
  it("makes a config updated with BROKEN in its description log errors after the update, none before", async ({
    onTestFinished,
  }) => {
    const url = await serve(onTestFinished, [
      "--profile",
      profile,
      "--log-rate",
      "600",
      "--fault-log-errors",
      "description:BROKEN",
    ]);
    const created = await call(url, "POST", "/api/projects/1/plugin_configs/", {
      plugin: 2,
      order: 40,
      enabled: true,
      name: "checkout-export",
      description: "exports checkouts",
    });
    await sleep(600);
    const updated = await call(url, "PATCH", `/api/projects/1/plugin_configs/${String(created.id)}/`, {
      description: "exports checkouts (BROKEN build)",
    });
    const changedAt = String(updated.updated_at);
    await sleep(1_200);

    const errors = entriesOf(await logs(url, ["--config", "checkout-export", "--level", "error"]));
    expect(errors.length).toBeGreaterThanOrEqual(3);
    for (const entry of errors) {
      expect(entry.type).toBe("ERROR");
      expect(entry.source).toBe("PLUGIN");
      expect(Date.parse(entry.timestamp)).toBeGreaterThan(Date.parse(changedAt));
    }
    const beforeChange = entriesOf(await logs(url, ["--config", "checkout-export", "--until", changedAt]));
    expect(beforeChange.length).toBeGreaterThanOrEqual(3);
    expect(beforeChange.filter((entry) => entry.type === "ERROR")).toEqual([]);
  });

  it("shows only the stored entries with --log-rate 0", async ({ onTestFinished }) => {
    const url = await serve(onTestFinished, ["--profile", profile, "--log-rate", "0"]);
    const entries = entriesOf(await logs(url, ["--config", "GeoIP"]));
    expect(entries.map((entry) => entry.timestamp)).toEqual([
      "2024-06-01T11:00:00.000Z",
      "2024-06-01T07:30:00.000Z",
      "2024-06-01T03:00:00.000Z",
      "2024-05-31T21:45:00.000Z",
      "2024-05-31T16:00:00.000Z",
      "2024-05-31T12:30:00.000Z",
    ]);
  });
});

describe.concurrent("pcsync serve's log flags", () => {
  it("refuses a bad selector or rate as it refuses any bad flag: a usage error, no stack trace", async () => {
    const [badPort, badSelector, badRate] = await Promise.all([
      runBuiltCli(["serve", "--port", "abc"]),
      runBuiltCli(["serve", "--port", "0", "--fault-log-errors", "descr:BROKEN"]),
      runBuiltCli(["serve", "--port", "0", "--log-rate", "lots"]),
    ]);
    expect(badPort.code).not.toBe(0);
    expect([badSelector.code, badRate.code]).toEqual([badPort.code, badPort.code]);
    expect(badSelector.stderr).toContain(
      '--fault-log-errors "descr:BROKEN": a selector is name:GLOB, plugin:ID or description:TEXT',
    );
    expect(badRate.stderr).toContain(
      '--log-rate must be log entries per minute per plugin config, from 0 (none) to 60000, got "lots"',
    );
    for (const run of [badSelector, badRate]) expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
