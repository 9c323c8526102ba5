import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Files that replace a module with vi.mock need a module registry of their own; every other file
// shares its worker's (no per-file module reset), which halves the suite's time on two cores.
// Nothing in src/ is process-wide state a file could leak into the next: secrets travel in each
// run's io, and the signal handlers an in-process apply, logs or serve installs are removed when
// it ends.
const MOCKING_FILES = ["test/emulator/group-commit.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // More files at once than cores: much of the suite waits on servers, timeouts and child
    // processes. (Vitest's default, one worker fewer than cores, runs one file at a time on two.)
    maxWorkers: Math.max(4, availableParallelism()),
    projects: [
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: MOCKING_FILES, isolate: false },
      },
      { extends: true, test: { name: "isolated", include: MOCKING_FILES, isolate: true } },
    ],
  },
});
