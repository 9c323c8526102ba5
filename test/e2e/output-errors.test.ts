// E2E: an output stream that fails. stdout on a full disk (/dev/full answers every write with
// ENOSPC) ends plan with one line on stderr and exit 1, never a stack trace; apply still makes
// every change before it says its output was lost; a reader that goes away (EPIPE) stays quiet.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { open } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { CLI_PATH } from "../support/cli.js";
import { hasStackTrace, withoutOutcomeLines } from "../support/output-checks.js";
import { EXAMPLES } from "../support/paths.js";
import { openServer, type TestServer } from "../support/test-server.js";

interface Run {
  code: number | null;
  stderr: string;
}

/** Runs the built CLI with stdout on /dev/full, or on a pipe whose reader has already gone. */
async function runWithDeadStdout(
  server: TestServer,
  args: string[],
  stdout: "full" | "closed-pipe",
): Promise<Run> {
  const full = stdout === "full" ? await open("/dev/full", "w") : undefined;
  try {
    return await new Promise<Run>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI_PATH, ...args], {
        env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...server.env },
        stdio: ["ignore", full === undefined ? "pipe" : full.fd, "pipe"],
      });
      // The reader goes away before pcsync writes anything: every write gets EPIPE.
      child.stdout?.destroy();
      let stderr = "";
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
  } finally {
    await full?.close();
  }
}

const onLinux = existsSync("/dev/full");

/** The writes the service answered: apply really had work to do. */
const writesTo = (server: TestServer) =>
  server.emulator.requestLog.filter((entry) => entry.method !== "GET" && entry.status < 300).length;

describe.runIf(onLinux).concurrent("stdout on a full disk", () => {
  it("plan: one line on stderr, exit 1", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const run = await runWithDeadStdout(server, ["plan", "-f", `${EXAMPLES}/small`], "full");
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toBe(
      "pcsync: cannot write to stdout: no space left on the device (ENOSPC); stopped, the output is lost\n",
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
  });

  it("apply: makes every change, then says the output was lost, exit 1", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const run = await runWithDeadStdout(
      server,
      ["apply", "--auto-approve", "-f", `${EXAMPLES}/pcsync.yaml`],
      "full",
    );
    expect(run.code, run.stderr).toBe(1);
    expect(withoutOutcomeLines(run.stderr)).toBe(
      "pcsync: cannot write to stdout: no space left on the device (ENOSPC); the output is lost, but the apply itself ran to the end and succeeded\n",
    );
    expect(writesTo(server)).toBeGreaterThan(0);
    const again = await server.run(["plan", "-f", `${EXAMPLES}/pcsync.yaml`, "--detailed-exitcode"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});

describe("a reader that went away (EPIPE)", () => {
  it("is not an error: plan stops quietly, and apply still makes every change", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const plan = await runWithDeadStdout(server, ["plan", "-f", `${EXAMPLES}/small`], "closed-pipe");
    expect(plan).toEqual({ code: 0, stderr: "" });
    const apply = await runWithDeadStdout(
      server,
      ["apply", "--auto-approve", "-f", `${EXAMPLES}/pcsync.yaml`],
      "closed-pipe",
    );
    expect({ ...apply, stderr: withoutOutcomeLines(apply.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(writesTo(server)).toBeGreaterThan(0);
    const again = await server.run(["plan", "-f", `${EXAMPLES}/pcsync.yaml`, "--detailed-exitcode"]);
    expect(again.code, again.stdout + again.stderr).toBe(0);
  });
});
