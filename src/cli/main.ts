#!/usr/bin/env node

// Entry point of the `pcsync` binary: signals are held before the run's modules load
// (early-signals.ts), so that a signal while pcsync starts still ends it with a true line.

import { setFlagsFromString } from "node:v8";
import { holdEarlySignals } from "./early-signals.js";

holdEarlySignals(process.argv.slice(2));

// undici's llhttp is WebAssembly, which V8's optimising tier compiles at the first request: ~300 ms
// of CPU, more than a small `pcsync plan`; the baseline compiler parses as fast (bench/README.md).
// Set here only: the binary owns its process, an in-process run does not.
setFlagsFromString("--liftoff-only");

await import("./run-binary.js");
