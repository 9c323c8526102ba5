// How a command is declared (its --help ends with the exit codes of src/exit-codes.ts), and what
// program.ts hands each command, so that no command imports the program.

import { Command } from "commander";
import type { ExitCode } from "../errors.js";
import { EXIT_CODE_TABLE, exitCodesOf, isCommandName } from "../exit-codes.js";
import type { CliIo, GivenIo } from "./cli-io.js";

export type RunCli = (argv: readonly string[], io: GivenIo) => Promise<ExitCode>;

/** `setExit` sets the exit code of a run that ends without an error. */
export type CommandRegistrar = (io: CliIo, setExit: (code: ExitCode) => void, program: Command) => Command;

export function newCommand(name: string, description: string, helpAfter: string): Command {
  return new Command(name)
    .description(description)
    .addHelpText("after", helpAfter)
    .addHelpText("after", describeExitCodes(name));
}

/** For the program (undefined), the whole table. */
export function describeExitCodes(command: string | undefined): string {
  const rows = command === undefined ? EXIT_CODE_TABLE : isCommandName(command) ? exitCodesOf(command) : [];
  if (rows.length === 0) return "";
  const width = rows.reduce((widest, { code }) => Math.max(widest, String(code).length), 0);
  return `\nExit codes:\n${rows.map(({ code, meaning }) => `  ${String(code).padEnd(width)}  ${meaning}`).join("\n")}`;
}
