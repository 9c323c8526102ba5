#!/usr/bin/env node

// Entry point of the `pcsync` binary.

import { processIo } from "./io.js";
import { runCli } from "./program.js";

const exitCode = await runCli(process.argv.slice(2), processIo());
process.exitCode = exitCode;
