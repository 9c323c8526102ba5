// The one way a command is declared (its name, what it does, and what its --help ends with, the
// exit codes last), and what program.ts hands each command, so that no command imports the program.

import { Command } from "commander";
import type { ExitCode } from "../errors.js";
import type { CliIo, GivenIo } from "./cli-io.js";
import { describeExitCodes } from "./exit-codes-help.js";

/** Runs pcsync with these arguments and returns the exit code; never throws (program.ts's runCli). */
export type RunCli = (argv: readonly string[], io: GivenIo) => Promise<ExitCode>;

/** Makes one command, which the program adds; `setExit` sets the exit code of a run that ends without an error. */
export type CommandRegistrar = (io: CliIo, setExit: (code: ExitCode) => void, program: Command) => Command;

/** A command whose --help ends with `helpAfter` (notes, examples), then the exit codes it can end with. */
export function newCommand(name: string, description: string, helpAfter: string): Command {
  return new Command(name)
    .description(description)
    .addHelpText("after", helpAfter)
    .addHelpText("after", describeExitCodes(name));
}
