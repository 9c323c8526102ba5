// Runs the CLI in this process with captured streams, for tests that need many runs cheaply. Each
// run has secrets of its own (the io's registry), as a new process would: nothing an earlier run
// registered redacts a later run's output, so a run that lacks a redaction shows it.

import type { GivenIo } from "../../src/cli/cli-io.js";
import { runCli } from "../../src/cli/program.js";
import { captureStreams } from "./capture.js";

export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `pcsync ARGS` in-process, with exactly this environment (plus NO_COLOR) and working directory.
 * As for a child process, a variable set to undefined is not in the environment at all.
 */
export async function runCliInProcess(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
): Promise<InProcessRun> {
  const streams = captureStreams();
  const env = Object.fromEntries(
    Object.entries({ NO_COLOR: "1", ...options.env }).filter(([, value]) => value !== undefined),
  );
  const io: GivenIo = { stdout: streams.stdout, stderr: streams.stderr, env, cwd: options.cwd };
  const code = await runCli([...args], io);
  return { code, ...streams.text() };
}
