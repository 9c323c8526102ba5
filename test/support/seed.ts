// The seed of a test's randomness: PCSYNC_TEST_SEED pins it, otherwise one is picked, and a test
// that fails names its seed and the command that replays it.

import { relative } from "node:path";
import { onTestFailed, TestRunner } from "vitest";

export const SEED_VARIABLE = "PCSYNC_TEST_SEED";

/** Seeds are below 2^31: what the emulator's fault injection, mulberry32 and fast-check all take. */
const SEED_LIMIT = 2 ** 31;

/** The seed PCSYNC_TEST_SEED pins, or a new one when it is unset. */
export function chooseSeed(): number {
  const pinned = process.env[SEED_VARIABLE];
  if (pinned === undefined || pinned === "") return Math.floor(Math.random() * SEED_LIMIT);
  const seed = Number(pinned);
  if (!/^\d+$/.test(pinned) || seed >= SEED_LIMIT)
    throw new Error(`${SEED_VARIABLE} must be a whole number from 0 to ${SEED_LIMIT - 1}, got "${pinned}"`);
  return seed;
}

/** The line a failure ends with: the seed, and how to run the test file again with it. */
export function describeReplay(seed: number, testFile: string): string {
  return `random seed ${seed}; replay with ${SEED_VARIABLE}=${seed} npx vitest run ${relative(process.cwd(), testFile)}`;
}

/** The last seed each running test picked: the one its failure happened with. */
const latestSeeds = new WeakMap<object, number>();

/**
 * A seed for the running test (not a concurrent one: the failure note goes to the current test).
 * Unless pinned, every call picks a new seed; a failure names the last one picked.
 */
export function pickTestSeed(): number {
  const test = TestRunner.getCurrentTest();
  if (test === undefined) throw new Error("pickTestSeed() is called while a test runs");
  const seed = chooseSeed();
  if (!latestSeeds.has(test)) {
    onTestFailed(({ task }) => {
      const note = describeReplay(latestSeeds.get(test) ?? seed, task.file.filepath);
      for (const error of task.result?.errors ?? []) error.message = `${error.message}\n\n${note}`;
    });
  }
  latestSeeds.set(test, seed);
  return seed;
}
