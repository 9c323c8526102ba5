// The one table of exit codes and what each means per command: every --help's "Exit codes:" is made
// from it, and a test holds it to each command's real exit paths.

import {
  EXIT_CHANGES,
  EXIT_ERROR,
  EXIT_OK,
  EXIT_REFUSED,
  EXIT_ROLLOUT_HALTED,
  EXIT_SIGINT,
  EXIT_SIGTERM,
  type ExitCode,
} from "./errors.js";

/** In the order help lists them. */
export const COMMAND_NAMES = [
  "validate",
  "plan",
  "apply",
  "watch",
  "rollback",
  "export",
  "show",
  "demo",
  "serve",
  "logs",
  "job",
  "frontend",
  "completion",
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

export interface ExitCodeRow {
  code: ExitCode;
  /** For the program's --help. */
  meaning: string;
  commands: Partial<Record<CommandName, string>>;
}

const EVERY_COMMAND = <T>(value: T): Record<CommandName, T> =>
  Object.fromEntries(COMMAND_NAMES.map((name) => [name, value])) as Record<CommandName, T>;

// A signal ends any command: while pcsync starts, its hold exits with these codes; after, a command
// without handling of its own is ended by the signal, which a shell reports as the same code.
const STOPPED_BY_SIGINT = "stopped by Ctrl-C (SIGINT)";
const STOPPED_BY_SIGTERM = "stopped by SIGTERM";

export const EXIT_CODE_TABLE: readonly ExitCodeRow[] = [
  {
    code: EXIT_OK,
    meaning: "success (with --detailed-exitcode: no changes)",
    commands: {
      ...EVERY_COMMAND("success"),
      validate: "the manifest is valid",
      plan: "success (with --detailed-exitcode: no changes)",
      apply: "applied, or nothing to apply (--dry-run: planned)",
      watch: "stopped by SIGTERM or SIGINT once the writes in flight finished; --once: in sync (no changes)",
      rollback: "rolled back, or nothing to roll back (--dry-run: planned)",
      show: "success (with --detailed-exitcode: the plan has no changes)",
      serve: "stopped by Ctrl-C or SIGTERM, its data saved",
      logs: "success; --follow: stopped by Ctrl-C or SIGTERM",
    },
  },
  {
    code: EXIT_ERROR,
    meaning: "error: invalid manifest or flags, API or network failure, partial apply",
    commands: {
      ...EVERY_COMMAND("error: bad flags, API or network failure"),
      validate: "the manifest is invalid, or could not be read; bad flags",
      plan: "error: invalid manifest or flags, API or network failure",
      apply: "error: invalid manifest or flags, API or network failure, partial apply, not approved",
      watch:
        "could not start (bad flags, listen address); --once: the manifest is invalid, the cycle failed, or --metrics-file could not be written",
      rollback: "error: bad flags or journal, API or network failure, partial rollback, not approved",
      show: "the plan file is missing or not a pcsync plan; bad flags",
      demo: "a step of the demo did not succeed",
      serve: "could not start or save; bad flags",
      completion: "an unknown shell",
    },
  },
  {
    code: EXIT_CHANGES,
    meaning: "plan --detailed-exitcode: changes are pending",
    commands: {
      plan: "plan --detailed-exitcode: changes are pending",
      show: "with --detailed-exitcode: the plan has changes",
      watch: "--once: changes are pending (drift)",
    },
  },
  {
    code: EXIT_REFUSED,
    meaning:
      "refused by a safety guard or a stale saved plan; nothing was changed (watch --once: nothing to the families refused)",
    commands: {
      plan: "refused: it deletes a protected record, or a config matches another owner's record",
      apply:
        "refused by a safety guard, a stale saved plan, another owner's record, records changed while asking, or a journal another run holds or of another plan or server; nothing was changed (but another owner's claim that won during the run: see its message)",
      rollback:
        "refused: records changed since the run (without --force) or while asking, a name a live record holds now, or a journal another run holds or of another server; nothing was changed",
      // The other families' heals are made: the code says a person must look (a refusal, not an error).
      watch:
        "--once: a safety guard or another owner's record refused to heal a family, which got no write; the other families were healed (the cycle's line counts them and names the journal)",
    },
  },
  {
    code: EXIT_ROLLOUT_HALTED,
    meaning: "a rollout halted by a failed health check (rolled back, with on_failure: rollback)",
    commands: {
      apply:
        "a rollout (rollout: in the manifest) halted by a failed health check; with on_failure: rollback, every wave applied was rolled back; or refused (nothing changed): the same manifest's last rollout halted and a failing project still holds the change",
    },
  },
  {
    code: EXIT_SIGINT,
    meaning: "interrupted by Ctrl-C (SIGINT); an apply's summary says what was done",
    commands: {
      ...EVERY_COMMAND(STOPPED_BY_SIGINT),
      apply: "interrupted by Ctrl-C (SIGINT): no change started after it; the summary says what was done",
      rollback: "interrupted by Ctrl-C (SIGINT): no change started after it; the summary says what was done",
      watch:
        "Ctrl-C (SIGINT) while it starts, a second one (exited at once: writes in flight may or may not be made), or one that stopped the cycle of --once before it wrote",
      serve: "a second Ctrl-C (SIGINT) while stopping: ended at once",
    },
  },
  {
    code: EXIT_SIGTERM,
    meaning: "interrupted by SIGTERM (a cancelled CI job); an apply's summary says what was done",
    commands: {
      ...EVERY_COMMAND(STOPPED_BY_SIGTERM),
      apply: "interrupted by SIGTERM (a cancelled CI job): as for Ctrl-C",
      rollback: "interrupted by SIGTERM (a cancelled CI job): as for Ctrl-C",
      watch: "SIGTERM: as for Ctrl-C",
      serve: "a second SIGTERM while stopping: ended at once",
    },
  },
];

/** Lowest first. */
export function exitCodesOf(command: CommandName): { code: ExitCode; meaning: string }[] {
  return EXIT_CODE_TABLE.flatMap((row) => {
    const meaning = row.commands[command];
    return meaning === undefined ? [] : [{ code: row.code, meaning }];
  });
}

export function isCommandName(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}
