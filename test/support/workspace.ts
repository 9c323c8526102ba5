// One test's own corner: a temporary directory, and the servers it starts, all closed when the test
// finishes, so that no test depends on what another set up.

import type { TestContext } from "vitest";
import { temporaryDirectory } from "./work-dir.js";

export interface Workspace {
  directory: string;
  /** Runs `close` when the test finishes, before the directory is removed (last deferred, first run). */
  defer(close: () => Promise<void>): void;
}

export async function openWorkspace(onTestFinished: TestContext["onTestFinished"]): Promise<Workspace> {
  const { path, remove } = await temporaryDirectory();
  const closes: Array<() => Promise<void>> = [];
  onTestFinished(async () => {
    for (const close of closes.reverse()) await close();
    await remove();
  });
  return { directory: path, defer: (close) => closes.push(close) };
}
