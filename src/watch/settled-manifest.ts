// Reads the manifest files only once they have settled: a file that was modified moments ago, or
// while it was read, may be half written (a truncated list of configs is still valid YAML, and with
// `prune: true` it would delete the rest), so it is read again until two reads agree.

import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { LoadResult } from "../manifest/index.js";

export interface SettleOptions {
  /** A file modified less than this long ago is not trusted yet. */
  settleMs: number;
  /** Reads at most; a manifest still changing then is not used this cycle. */
  maxReads: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const SETTLE_DEFAULTS = { settleMs: 500, maxReads: 20 } as const satisfies SettleOptions;

export type SettledLoad =
  | { settled: true; result: LoadResult }
  | { settled: false; result: LoadResult; waitedMs: number };

/** Size, modification time and inode of each file read, or "missing": what a rewrite changes. */
async function fingerprintFiles(
  files: readonly string[],
  cwd: string,
): Promise<{ fingerprint: string; newest: number }> {
  let newest = 0;
  const parts = await Promise.all(
    files.map(async (file) => {
      const info = await stat(resolve(cwd, file)).catch(() => undefined);
      if (info === undefined) return `${file}:missing`;
      newest = Math.max(newest, info.mtimeMs);
      return `${file}:${info.ino}:${info.size}:${info.mtimeMs}`;
    }),
  );
  return { fingerprint: parts.join("\n"), newest };
}

/**
 * Loads with `load` until the files read were last modified at least `settleMs` before the read
 * ended, and (after a wait) a second read found them unchanged.
 */
export async function loadSettledManifests(
  load: () => Promise<LoadResult>,
  cwd: string,
  options: SettleOptions = SETTLE_DEFAULTS,
): Promise<SettledLoad> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  const started = now();
  let previous: string | undefined;
  let result: LoadResult | undefined;
  for (let read = 0; read < options.maxReads; read++) {
    result = await load();
    const { fingerprint, newest } = await fingerprintFiles(result.files, cwd);
    const quiet = now() - newest >= options.settleMs;
    if (quiet && (previous === undefined || previous === fingerprint)) return { settled: true, result };
    previous = fingerprint;
    await sleep(options.settleMs);
  }
  if (result === undefined) throw new Error("loadSettledManifests: maxReads must be at least 1");
  return { settled: false, result, waitedMs: now() - started };
}
