#!/usr/bin/env node

// Entry point of the `pcsync` binary.

import { processIo } from "./io.js";
import { runCli } from "./program.js";

// A reader that goes away (`pcsync plan | head`) is not an error: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const exitCode = await runCli(process.argv.slice(2), processIo());
process.exitCode = exitCode;
