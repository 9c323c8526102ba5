import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file in a fresh process, for the signal handlers an in-process apply installs, which are
    // process-wide. (Secrets are not: each run has its own registry, passed in its io.)
    pool: "forks",
    isolate: true,
    // More files at once than cores: much of the suite waits on servers, timeouts and child
    // processes. (Vitest's default, one worker fewer than cores, runs one file at a time on two.)
    maxWorkers: Math.max(4, availableParallelism()),
  },
});
