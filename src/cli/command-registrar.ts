// What program.ts hands each command as it registers it, so that no command imports the program.

import type { Command } from "commander";
import type { ExitCode } from "../errors.js";
import type { CliIo, GivenIo } from "./cli-io.js";

/** Runs pcsync with these arguments and returns the exit code; never throws (program.ts's runCli). */
export type RunCli = (argv: readonly string[], io: GivenIo) => Promise<ExitCode>;

/** Adds one command to the program; `setExit` sets the exit code of a run that ends without an error. */
export type CommandRegistrar = (program: Command, io: CliIo, setExit: (code: ExitCode) => void) => void;
