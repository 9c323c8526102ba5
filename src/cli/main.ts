#!/usr/bin/env node

// Entry point of the `pcsync` binary. Ctrl-C or SIGTERM is held first, before the modules of the
// run load (early-signals.ts), so that a signal while pcsync starts still ends it with a true
// line (and, for watch, SIGHUP, which must never end it); then the run itself (run-binary.ts).

import { setFlagsFromString } from "node:v8";
import { holdEarlySignals } from "./early-signals.js";

holdEarlySignals(process.argv.slice(2));

// undici parses HTTP with llhttp built to WebAssembly, which V8 also compiles with its optimising
// tier at the first request: about 300 ms of CPU, more than the rest of a `pcsync plan` of a few
// projects. The baseline compiler alone parses as fast at the sizes pcsync reads (bench/README.md).
// The binary owns its process, so the flag is set here only, never where pcsync runs in-process.
setFlagsFromString("--liftoff-only");

await import("./run-binary.js");
