import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file in a fresh process: the secret registry (src/redact.ts) and signal handlers are
    // process-wide, and a key one file registers must neither redact another file's output nor
    // hide a redaction that file lacks. (Without isolation the suite takes about a quarter less
    // CPU, but a file's result would depend on the files that ran before it in its worker.)
    pool: "forks",
    isolate: true,
    // More files at once than cores: much of the suite waits on servers, timeouts and child
    // processes. (Vitest's default, one worker fewer than cores, runs one file at a time on two.)
    maxWorkers: Math.max(4, availableParallelism()),
  },
});
