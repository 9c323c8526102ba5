// The "Exit codes:" section of every --help: one table of meanings, and which of them each
// command can end with, so that a script's author reads them where they read the options.

import {
  EXIT_CHANGES,
  EXIT_ERROR,
  EXIT_OK,
  EXIT_REFUSED,
  EXIT_ROLLOUT_HALTED,
  EXIT_SIGINT,
  EXIT_SIGTERM,
  type ExitCode,
} from "../errors.js";

const MEANINGS = {
  [EXIT_OK]: "success (with --detailed-exitcode: no changes)",
  [EXIT_ERROR]: "error: invalid manifest or flags, API or network failure, partial apply",
  [EXIT_CHANGES]: "plan --detailed-exitcode: changes are pending",
  [EXIT_REFUSED]: "refused by a safety guard or a stale saved plan; nothing was changed",
  [EXIT_ROLLOUT_HALTED]: "a rollout halted by a failed health check (rolled back, with on_failure: rollback)",
  [EXIT_SIGINT]: "interrupted by Ctrl-C (SIGINT); the summary says what was done",
  [EXIT_SIGTERM]: "interrupted by SIGTERM (a cancelled CI job); the summary says what was done",
} as const satisfies Record<ExitCode, string>;

/** Per command, the meanings that differ from the table's, or that the table leaves out. */
const COMMAND_CODES: Readonly<Record<string, Partial<Record<ExitCode, string>>>> = {
  validate: {
    [EXIT_OK]: "the manifest is valid",
    [EXIT_ERROR]: "the manifest is invalid, or could not be read",
  },
  plan: {
    [EXIT_OK]: MEANINGS[EXIT_OK],
    [EXIT_ERROR]: MEANINGS[EXIT_ERROR],
    [EXIT_CHANGES]: MEANINGS[EXIT_CHANGES],
  },
  apply: {
    [EXIT_ERROR]: MEANINGS[EXIT_ERROR],
    [EXIT_REFUSED]: MEANINGS[EXIT_REFUSED],
    [EXIT_ROLLOUT_HALTED]: MEANINGS[EXIT_ROLLOUT_HALTED],
    [EXIT_SIGINT]: MEANINGS[EXIT_SIGINT],
    [EXIT_SIGTERM]: MEANINGS[EXIT_SIGTERM],
  },
  show: {
    [EXIT_OK]: MEANINGS[EXIT_OK],
    [EXIT_ERROR]: "the plan file is missing or not a pcsync plan",
    [EXIT_CHANGES]: "show --detailed-exitcode: the plan has changes",
  },
  demo: { [EXIT_ERROR]: "a step of the demo did not succeed" },
  serve: {
    [EXIT_OK]: "stopped by Ctrl-C or SIGTERM, its data saved",
    [EXIT_ERROR]: "could not start or save",
  },
};

/** The exit codes `command` can end with (the whole table for the program or an unlisted command). */
export function describeExitCodes(command: string | undefined): string {
  const specific = command === undefined ? undefined : COMMAND_CODES[command];
  const codes: Partial<Record<ExitCode, string>> = specific ?? (command === undefined ? MEANINGS : {});
  const rows = Object.entries({
    [EXIT_OK]: command === undefined ? MEANINGS[EXIT_OK] : "success",
    [EXIT_ERROR]: "error: bad flags, API or network failure",
    ...codes,
  });
  const width = rows.reduce((widest, [code]) => Math.max(widest, code.length), 0);
  return `\nExit codes:\n${rows.map(([code, meaning]) => `  ${code.padEnd(width)}  ${meaning}`).join("\n")}`;
}
