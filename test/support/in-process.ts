// Runs the CLI in this process with captured streams, for tests that need many runs cheaply. The
// runs share the module's state, above all the registry of secrets (src/redact.ts): every run
// registers the key of its environment itself, but a key an earlier run registered stays
// registered. Each test file gets a fresh process; a test that needs a registry of its own within
// a file opens an isolated CLI (isolated-cli.ts).

import type { CliIo } from "../../src/cli/io.js";
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
  const io: CliIo = { stdout: streams.stdout, stderr: streams.stderr, env, cwd: options.cwd };
  const code = await runCli([...args], io);
  return { code, ...streams.text() };
}
