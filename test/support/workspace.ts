// One test's own corner: a temporary directory, and the servers it starts, all closed when the test
// finishes, so that no test depends on what another set up.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "vitest";

export interface Workspace {
  directory: string;
  /** Runs `close` when the test finishes, before the directory is removed (last deferred, first run). */
  defer(close: () => Promise<void>): void;
}

export async function openWorkspace(onTestFinished: TestContext["onTestFinished"]): Promise<Workspace> {
  const directory = await mkdtemp(join(tmpdir(), "pcsync-test-"));
  const closes: Array<() => Promise<void>> = [];
  onTestFinished(async () => {
    for (const close of closes.reverse()) await close();
    await rm(directory, { recursive: true, force: true });
  });
  return { directory, defer: (close) => closes.push(close) };
}
