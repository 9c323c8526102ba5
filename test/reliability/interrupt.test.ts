// Ctrl-C and SIGTERM (a cancelled CI job) against the built CLI. During the writes: no write
// starts after the signal, those in flight finish or time out, the summary says what was done and
// what was not started, and the exit code is 130 or 143; a second signal exits at once. Before any
// write: the run ends at once, and nothing was changed.

import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_MODULES_PATH, spawnCli } from "../support/cli.js";
import { type FamilyServer, LIST, type PostContext, startFamilyServer } from "../support/family-server.js";
import { createsManifest, names } from "../support/manifest-text.js";
import { KEY } from "../support/scenario.js";
import { sendJson } from "../support/scripted-server.js";
import { startServer } from "../support/test-server.js";
import { waitFor } from "../support/wait-for.js";
import { temporaryDirectory, writeManifest } from "../support/work-dir.js";

const servers: FamilyServer[] = [];
const directories: Array<() => Promise<void>> = [];
const onEnd: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const end of onEnd.splice(0)) await end();
  for (const server of servers.splice(0)) await server.close();
  for (const remove of directories.splice(0)) await remove();
});

const CONCURRENCY = 2;
/**
 * "At once": far under what the run would wait otherwise (requests held for two minutes, a 429
 * pause of 80 s, a module load held for 60 s), and far over what a loaded machine adds to a process's
 * exit. These tests check what a run waits for, not how fast it is.
 */
const AT_ONCE_MS = 15_000;
const HOLD_MODULE = fileURLToPath(new URL("../support/hold-module.mjs", import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startApply(
  server: FamilyServer,
  configs: readonly string[],
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
) {
  servers.push(server);
  const directory = await temporaryDirectory();
  directories.push(directory.remove);
  const manifest = await writeManifest(directory.path, createsManifest(configs));
  return spawnCli(
    [
      "apply",
      "--auto-approve",
      "-f",
      manifest,
      "--base-url",
      server.url,
      "--concurrency",
      String(CONCURRENCY),
      ...extra,
    ],
    // A held module is one of the tree the bundle is made from: run that tree when one is held.
    {
      env: { PCSYNC_API_KEY: KEY, ...env },
      ...(env.PCSYNC_TEST_HOLD_MODULE === undefined ? {} : { cliPath: CLI_MODULES_PATH }),
    },
  );
}

const posts = (server: FamilyServer) => server.arrivals.filter((arrival) => arrival.method === "POST");
const writes = (server: FamilyServer) => server.arrivals.filter((arrival) => arrival.method !== "GET");

/** Commits and answers each POST after `ms`: while it waits, its request holds one of the client's slots. */
const answerAfter = (ms: number) => (post: PostContext) => {
  void sleep(ms).then(() => post.answer(post.commit()));
};

describe.concurrent("a signal while apply writes", () => {
  it("SIGINT: no write starts after it, those in flight finish, the summary is printed, exit 130", async () => {
    const server = await startFamilyServer({ onPost: answerAfter(600) });
    const configs = names("Interrupted", 12);
    const { child, done } = await startApply(server, configs);
    // Every slot is taken by a POST the server holds: the other creates wait in the client's queue.
    await waitFor(() => posts(server).length === CONCURRENCY, "the first POSTs");
    const signalledAt = Date.now();
    child.kill("SIGINT");
    const run = await done;

    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(130);
    expect(writes(server)).toHaveLength(CONCURRENCY);
    for (const write of writes(server)) expect(write.at).toBeLessThanOrEqual(signalledAt);
    // Nothing at all was sent after the signal, not even a read.
    expect(server.arrivals.filter((arrival) => arrival.at > signalledAt)).toEqual([]);
    expect(server.records).toHaveLength(CONCURRENCY);

    expect(run.stderr).toContain(
      "pcsync: SIGINT received: no new change will start; waiting for the requests in flight to finish (press Ctrl-C again to exit at once).",
    );
    expect(run.stdout).toContain(
      "Apply interrupted: 2 created, 0 updated, 0 deleted, 0 reordered; 0 failed, 10 not started, 0 skipped, 2 unchecked.",
    );
    for (const stored of server.records) {
      expect(run.stdout).toContain(
        `✓ done: create "${stored.name}" (id ${stored.id}) in project 1 plugin_configs`,
      );
    }
    // Not started is not "skipped": listed once, under its own heading, agreeing with the summary.
    expect(run.stdout).not.toContain("… skipped");
    expect(run.stdout).toContain("Not started (10): the run was interrupted before these changes");
    expect(run.stdout.match(/^ {2}create "Interrupted \d+" in project 1 plugin_configs/gm)).toHaveLength(10);
    // Without a terminal, each finished change was logged as it finished.
    for (const stored of server.records) {
      expect(run.stderr).toContain(`created "${stored.name}" (id ${stored.id}) in project 1 plugin_configs`);
    }
    expect(run.stderr).toMatch(
      /^pcsync: apply interrupted by SIGINT: 2 done, 10 not started, 0 failed\. Run `pcsync plan` to see what is left, then apply again to finish\.$/m,
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
  }, 30_000);

  it("SIGTERM: requests in flight time out, their creates are reported unknown, exit 143", async () => {
    // Each POST commits on arrival and is never answered: its outcome can only be unknown.
    const server = await startFamilyServer({ onPost: (post) => void post.commit() });
    const { child, done } = await startApply(server, names("Terminated", 6), ["--timeout", "1"]);
    await waitFor(() => posts(server).length === CONCURRENCY, "the first POSTs");
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    const run = await done;
    const exitedAt = Date.now();

    expect(run.code, run.stderr).toBe(143);
    expect(server.arrivals.filter((arrival) => arrival.at > signalledAt)).toEqual([]);
    // It waited for the requests in flight (until their 1 s timeout), but not for a settle window
    // (the summary's two unknown creates say so too: a settle would have found them).
    expect(exitedAt - signalledAt).toBeLessThan(AT_ONCE_MS);
    expect(run.stderr).toContain("pcsync: SIGTERM received: no new change will start");
    expect(run.stdout).toContain(
      "Apply interrupted: 0 created, 0 updated, 0 deleted, 0 reordered; 0 failed, 4 not started, 0 skipped, 2 unknown.",
    );
    expect(
      run.stdout.match(
        /^\? unknown: create "Terminated \d+" .*may or may not have been created: the run was interrupted/gm,
      ),
    ).toHaveLength(2);
    expect(run.stdout).toContain("Run `pcsync plan` to see what the server holds");
    // The server holds the two unknown creates: the summary did not call them failed or absent.
    expect(server.records).toHaveLength(2);
    expect(run.stderr).toMatch(
      /^pcsync: apply interrupted by SIGTERM: 0 done, 4 not started, 0 failed, 2 unknown\./m,
    );
  }, 30_000);

  it("SIGINT while the rate limiter holds every request through a 429 pause: none waits it out", async () => {
    // Throttled for 80 s (under the 90 s a run waits out at most): every create waits in the
    // client's limiter, none in flight.
    const server = await startFamilyServer({
      onPost: (post) =>
        sendJson(post.response, 429, { detail: "Request was throttled." }, { "retry-after": "80" }),
    });
    const { child, done } = await startApply(server, names("Throttled", 6));
    // The first 429 pauses the limiter: the other creates wait in it (how many were sent before
    // that answer came back depends on the journal's sync, not on what this test checks).
    await waitFor(() => posts(server).length >= 1, "the throttled POSTs");
    await sleep(200);
    const signalledAt = Date.now();
    child.kill("SIGINT");
    const run = await done;

    expect(run.code, run.stderr).toBe(130);
    expect(Date.now() - signalledAt).toBeLessThan(AT_ONCE_MS);
    expect(server.arrivals.filter((arrival) => arrival.at > signalledAt)).toEqual([]);
    expect(run.stdout).toContain(
      "Apply interrupted: 0 created, 0 updated, 0 deleted, 0 reordered; 0 failed, 6 not started, 0 skipped.",
    );
    expect(server.records).toEqual([]);
  }, 30_000);

  it("a second SIGINT exits at once, without waiting for the requests in flight", async () => {
    const server = await startFamilyServer({ onPost: () => undefined });
    const { child, done, soFar } = await startApply(server, names("Twice", 6), ["--timeout", "120"]);
    await waitFor(() => posts(server).length === CONCURRENCY, "the first POSTs");
    child.kill("SIGINT");
    await waitFor(
      () => soFar().stderr.includes("SIGINT received: no new change"),
      "the first signal's notice",
    );
    const secondAt = Date.now();
    child.kill("SIGINT");
    const run = await done;

    expect(run.code).toBe(130);
    // The POSTs in flight would have taken two minutes to time out.
    expect(Date.now() - secondAt).toBeLessThan(AT_ONCE_MS);
    expect(run.stderr).toContain(
      "pcsync: SIGINT received again: exiting at once. Changes in flight may or may not have been made: run `pcsync plan` to see what the server holds.",
    );
    expect(writes(server)).toHaveLength(CONCURRENCY);
  }, 30_000);
});

describe.concurrent("a signal while apply reads and plans", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} ends the run at once, and nothing was changed (exit ${code})`, async () => {
      // The plan's read is never answered.
      const server = await startFamilyServer({
        intercept: (request) => request.method === "GET" && LIST.test(request.url),
      });
      const { child, done } = await startApply(server, names("Planned", 3), ["--timeout", "120"]);
      await waitFor(() => server.arrivals.length > 0, "the plan's read");
      const signalledAt = Date.now();
      child.kill(signal);
      const run = await done;

      expect(run.signal).toBeNull();
      expect(run.code).toBe(code);
      expect(Date.now() - signalledAt).toBeLessThan(AT_ONCE_MS);
      expect(run.stderr).toBe(
        `pcsync: ${signal} received before any change was made: stopped. Nothing was changed.\n`,
      );
      expect(run.stdout).toBe("");
      expect(writes(server)).toEqual([]);
    }, 30_000);
  }
});

describe.concurrent("a signal while pcsync starts, before apply listens for it", () => {
  // The signal comes while a module of the run is still loading: the binary's hold answers it,
  // since apply's own handling is not installed yet.
  it.each([
    { signal: "SIGTERM", code: 143, held: "/dist/src/cli/run-binary.js" },
    { signal: "SIGINT", code: 130, held: "/dist/src/cli/commands/apply.js" },
  ] as const)(
    "$signal while $held loads: nothing was changed (exit $code)",
    async ({ signal, code, held }) => {
      const server = await startFamilyServer({});
      const directory = await temporaryDirectory();
      directories.push(directory.remove);
      const marker = join(directory.path, "held");
      const { child, done } = await startApply(server, names("Early", 2), [], {
        NODE_OPTIONS: `--import=${pathToFileURL(HOLD_MODULE).href}`,
        PCSYNC_TEST_HOLD_MODULE: held,
        PCSYNC_TEST_HOLD_MARKER: marker,
      });
      await waitFor(() => existsSync(marker), `the load of ${held}`);
      const signalledAt = Date.now();
      child.kill(signal);
      const run = await done;

      expect(run.signal).toBeNull();
      expect(run.code).toBe(code);
      // Well before the held load would have gone on (60 s).
      expect(Date.now() - signalledAt).toBeLessThan(AT_ONCE_MS);
      expect(run.stderr).toBe(
        `pcsync: ${signal} received before any change was made: stopped. Nothing was changed.\n`,
      );
      expect(run.stdout).toBe("");
      expect(server.arrivals).toEqual([]);
    },
    30_000,
  );
});

describe("a signal once the command has ended", () => {
  const LINGER = pathToFileURL(fileURLToPath(new URL("../support/linger.mjs", import.meta.url))).href;

  it.each([
    ["apply that made every change", true, 0],
    ["validate of a manifest it refuses", false, 1],
  ] as const)("leaves the exit code as the run decided it: %s", async (_what, valid, code) => {
    const directory = await temporaryDirectory();
    directories.push(directory.remove);
    const server = await startServer("seed");
    onEnd.push(() => server.close());
    const manifest = await writeManifest(
      directory.path,
      valid ? createsManifest(["Late signal"]) : "version: 1\nprojects: [not a map]\n",
    );
    const run = spawnCli(valid ? ["apply", "--auto-approve", "-f", manifest] : ["validate", "-f", manifest], {
      cwd: directory.path,
      env: { ...server.env, NODE_OPTIONS: `--import ${LINGER}` },
    });
    const ended = valid ? "Apply complete" : "error";
    await waitFor(() => `${run.soFar().stdout}${run.soFar().stderr}`.includes(ended), "the end of the run");
    // Past the command's own handling of signals: the process only lingers now.
    await sleep(500);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr).toBe(code);
  });

  it("leaves the exit code as the run decided it when the signal comes as apply stops listening", async () => {
    const directory = await temporaryDirectory();
    directories.push(directory.remove);
    const server = await startServer("seed");
    onEnd.push(() => server.close());
    const manifest = await writeManifest(directory.path, createsManifest(["Signal at the end"]));
    const atEnd = pathToFileURL(
      fileURLToPath(new URL("../support/signal-at-command-end.mjs", import.meta.url)),
    ).href;
    const run = spawnCli(["apply", "--auto-approve", "-f", manifest], {
      cwd: directory.path,
      env: { ...server.env, NODE_OPTIONS: `--import ${atEnd}` },
    });
    const result = await run.done;
    expect(result.signal).toBeNull();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Apply complete");
  });
});
