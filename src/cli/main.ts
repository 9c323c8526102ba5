#!/usr/bin/env node

// Entry point of the `pcsync` binary. Ctrl-C or SIGTERM is held first, before the modules of the
// run load (early-signals.ts), so that a signal while pcsync starts still ends it with a true
// line; then the run itself (run-binary.ts).

import { holdEarlySignals } from "./early-signals.js";

holdEarlySignals();
await import("./run-binary.js");
