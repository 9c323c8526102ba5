// The built CLI as a child process, as a user runs it: for what only a process shows (its exit
// code, signals, kill -9, the real stdout and stderr). Other CLI tests run it in-process.

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * The package's bin (package.json "bin"): the build's bundle of dist/src, what a user installs and
 * runs, and quicker to start than the tree of modules (a third less CPU per run, which the suite's
 * hundreds of runs feel on two cores).
 */
export const CLI_PATH = fileURLToPath(new URL("../../dist/bundle/pcsync.mjs", import.meta.url));

/** The tree of modules the bundle is made from: for tests that hold the load of one of its modules. */
export const CLI_MODULES_PATH = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  /** The whole environment (plus PATH and NO_COLOR=1, which it may override). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Killed with SIGKILL after this long. */
  timeoutMs?: number;
  /** The entry point to run (default CLI_PATH, the bin). */
  cliPath?: string;
}

/** The built CLI as a child process, so that a test can signal it; `done` settles when it exits. */
export function spawnCli(
  args: readonly string[],
  options: SpawnOptions = {},
): { child: ChildProcess; done: Promise<CliRun>; soFar: () => { stdout: string; stderr: string } } {
  const child = spawn(process.execPath, [options.cliPath ?? CLI_PATH, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done, soFar: () => ({ stdout, stderr }) };
}

/** Runs the built CLI to its end. */
export function runBuiltCli(args: readonly string[], options: SpawnOptions = {}): Promise<CliRun> {
  return spawnCli(args, options).done;
}
