// The CLI in-process on module state of its own. A process keeps state for its whole life, above
// all the registry of secrets to redact: a key that one test's runs registered must not hide a
// leak in another's, so each test opens a CLI of its own instead of sharing the module's.

import { vi } from "vitest";
import { captureStreams } from "./capture.js";
import type * as InProcess from "./in-process.js";

/** `pcsync ARGS` in-process (runCliInProcess). */
export type RunCli = typeof InProcess.runCliInProcess;

/** One fresh import at a time: a reset during another import's evaluation would split its modules. */
let importing: Promise<unknown> = Promise.resolve();

/**
 * A CLI whose modules no other CLI shares (runCliInProcess from a fresh import). Its runs share
 * them with each other, as commands run one after another in one process would.
 */
export async function openIsolatedCli(): Promise<RunCli> {
  const fresh = importing.then(async () => {
    vi.resetModules();
    const inProcess = await import("./in-process.js");
    // The CLI imports each command when a run first needs it: import them all now, before the
    // next reset, so that they share this CLI's modules rather than a later one's.
    const { buildProgram } = await import("../../src/cli/program.js");
    await buildProgram({ ...captureStreams(), env: {}, cwd: process.cwd() }, () => undefined);
    return inProcess;
  });
  importing = fresh.catch(() => undefined);
  const { runCliInProcess } = await fresh;
  return runCliInProcess;
}

/** One run in a CLI of its own, as in a new process: nothing an earlier run registered is known. */
export async function runCliAlone(...args: Parameters<RunCli>): ReturnType<RunCli> {
  const run = await openIsolatedCli();
  return run(...args);
}
