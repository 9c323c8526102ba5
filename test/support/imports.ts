// Which modules a run of the built CLI imports: start-up time is mostly loading modules, so a
// test can catch an eager import (undici, ajv...) without timing anything.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CliRun, runBuiltCli } from "./cli.js";

const RECORDER = fileURLToPath(new URL("./record-imports.mjs", import.meta.url));

/**
 * Runs the built CLI and returns the URL of every module it imported, in order, then those it
 * loaded with require() (CommonJS dependencies' own files). `env` adds to the run's environment.
 */
export async function runRecordingImports(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliRun & { imported: string[] }> {
  const directory = mkdtempSync(join(tmpdir(), "pcsync-imports-"));
  const file = join(directory, "imports.txt");
  try {
    const run = await runBuiltCli(args, {
      ...options,
      env: { ...options.env, NODE_OPTIONS: `--import="${RECORDER}"`, PCSYNC_TEST_IMPORTS_FILE: file },
    });
    const imported = [
      ...new Set(
        readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => line !== ""),
      ),
    ];
    return { ...run, imported };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The npm packages among imported URLs (`ajv` for .../node_modules/ajv/dist/ajv.js), each once. */
export function packagesOf(urls: readonly string[]): string[] {
  const names = urls.flatMap((url) => {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    return match?.[1] === undefined ? [] : [match[1]];
  });
  return [...new Set(names)];
}
