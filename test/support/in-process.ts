// Runs the CLI in this process with captured streams, for tests that need many runs cheaply, and
// the forms in which a leaked API key would show in their output. The runs of one test file share
// the process's secret registry (src/redact.ts; each file gets a fresh process): every run
// registers the key of its environment itself, but a key registered by an earlier run stays
// registered, so a test of how a key gets registered uses a key no earlier run of its file used.

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

/**
 * Pieces by which a leaked key would be recognised in output: every 12-character slice, its
 * URL-encoded and hex (both cases) forms, and the base64/base64url groups it yields at each byte
 * alignment inside a longer encoded string. Written apart from src/redact.ts, so that a gap there is
 * not copied here.
 */
export function leakForms(key: string): string[] {
  const forms = new Set<string>();
  for (let start = 0; start + 12 <= key.length; start += 1) forms.add(key.slice(start, start + 12));
  const hex = Buffer.from(key).toString("hex");
  forms.add(hex).add(hex.toUpperCase());
  forms.add(encodeURIComponent(key));
  for (let offset = 0; offset < 3; offset += 1) {
    const bytes = Buffer.from(key.slice(offset));
    const wholeGroups = Math.floor(bytes.length / 3) * 4;
    forms.add(bytes.toString("base64").slice(0, wholeGroups));
    forms.add(bytes.toString("base64url").slice(0, wholeGroups));
  }
  return [...forms];
}
