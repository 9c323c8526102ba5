// The "Exit codes:" section of every --help, made from the one table (src/exit-codes.ts), so that a
// script's author reads them where they read the options.

import { EXIT_CODE_TABLE, exitCodesOf, isCommandName } from "../exit-codes.js";

/** The exit codes `command` can end with; for the program (undefined), the whole table. */
export function describeExitCodes(command: string | undefined): string {
  const rows =
    command === undefined
      ? EXIT_CODE_TABLE.map(({ code, meaning }) => ({ code, meaning }))
      : isCommandName(command)
        ? exitCodesOf(command)
        : [];
  if (rows.length === 0) return "";
  const width = rows.reduce((widest, { code }) => Math.max(widest, String(code).length), 0);
  return `\nExit codes:\n${rows.map(({ code, meaning }) => `  ${String(code).padEnd(width)}  ${meaning}`).join("\n")}`;
}
