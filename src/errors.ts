// The base of every error pcsync reports to a user: a stable code, an exit code, and a message
// that says what to do next. The CLI maps these to exit codes in one place.

import { inspect } from "node:util";
import { redactDeep, type SecretRegistry } from "./redact.js";

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_CHANGES = 2;
export const EXIT_REFUSED = 3;
/** A rollout halted by a failed health check (and rolled back, with `on_failure: rollback`). */
export const EXIT_ROLLOUT_HALTED = 4;
/** Ended by SIGINT (Ctrl-C) or SIGTERM: 128 + the signal's number, as shells report it. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export type InterruptSignal = "SIGINT" | "SIGTERM";

/** 128 + the signal's number, as a shell reports a process that the signal ended. */
export const SIGNAL_EXIT_CODES = { SIGINT: EXIT_SIGINT, SIGTERM: EXIT_SIGTERM } as const satisfies Record<
  InterruptSignal,
  number
>;

export type ExitCode =
  | typeof EXIT_OK
  | typeof EXIT_ERROR
  | typeof EXIT_CHANGES
  | typeof EXIT_REFUSED
  | typeof EXIT_ROLLOUT_HALTED
  | typeof EXIT_SIGINT
  | typeof EXIT_SIGTERM;

/**
 * An error class's messages: one entry per stable code, from what an error of that code knows (its
 * facts) to what it says. A new kind of error is a new code in a table, not a new class.
 */
export type MessageTable = Record<string, (facts: never) => string>;

/** What an error of `code` knows, as its table's entry takes it. */
export type FactsOf<Table extends MessageTable, Code extends keyof Table> = Parameters<Table[Code]>[0];

/** The message of `code` in `table`, from what the error knows. */
export function messageOf<Table extends MessageTable, Code extends keyof Table & string>(
  table: Table,
  code: Code,
  facts: FactsOf<Table, Code>,
): string {
  return (table[code] as (facts: FactsOf<Table, Code>) => string)(facts);
}

/** Whether `error` is a `type`, of one of `codes` when given: a code check, not a class per kind. */
export function isErrorOf<Type extends PcsyncError>(
  error: unknown,
  type: abstract new (...args: never[]) => Type,
  codes: readonly string[],
): error is Type {
  return error instanceof type && (codes.length === 0 || codes.includes(error.code));
}

export class PcsyncError extends Error {
  /** Stable, machine-readable error code (e.g. `manifest_invalid`, `api_error`). */
  readonly code: string;
  /** The process exit code this error maps to. */
  readonly exitCode: ExitCode;
  /** What the user may check or do, when the message cannot be sure of it; printed on its own line. */
  readonly hint?: string;

  constructor(
    code: string,
    message: string,
    options: {
      exitCode?: ExitCode;
      cause?: unknown;
      hint?: string | undefined;
      /** The secrets the error may quote (the client's key): its inspect and JSON redact them. */
      secrets?: SecretRegistry | undefined;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? EXIT_ERROR;
    if (options.hint !== undefined) this.hint = options.hint;
    this.#secrets = options.secrets;
  }

  readonly #secrets: SecretRegistry | undefined;

  /** The secrets this error hides in its inspect and JSON, for an error made from it. */
  protected get secrets(): SecretRegistry | undefined {
    return this.#secrets;
  }

  // An error may quote what a server sent, the API key included; it is shown where output leaves
  // the process, redacted there. Inspecting it or turning it into JSON redacts too, so a log line
  // or a crash report made of it never carries the key.
  [inspect.custom](_depth: number, options: object): string {
    const shown = new Error(this.message, this.cause === undefined ? undefined : { cause: this.cause });
    Object.defineProperty(shown, "stack", { value: this.stack, enumerable: false });
    Object.assign(shown, this);
    const text = inspect(shown, options);
    return this.#secrets === undefined ? text : this.#secrets.redact(text).text;
  }

  toJSON(): Record<string, unknown> {
    const value = { ...Object.fromEntries(Object.entries(this)), name: this.name, message: this.message };
    return this.#secrets === undefined ? value : redactDeep(value, this.#secrets).value;
  }
}

/**
 * An apply that stopped before its first write: the cause's own words, then that nothing was
 * changed, for a user wondering what happened. Code, exit code and hint stay the cause's.
 */
export class NothingChangedError extends PcsyncError {
  constructor(cause: PcsyncError) {
    super(cause.code, `${cause.message} Nothing was changed.`, {
      exitCode: cause.exitCode,
      cause,
      hint: cause.hint,
    });
  }
}

/** Rethrows `error`, saying that nothing was changed unless it says so itself (a saved plan's refusal). */
export function throwSayingNothingChanged(error: unknown): never {
  throw error instanceof PcsyncError && !isErrorOf(error, RefusedError, SAVED_PLAN_REFUSALS)
    ? new NothingChangedError(error)
    : error;
}

/** What an error says, for a message that quotes it: its message, or the thrown value as text. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A command-line usage error: bad flag values, missing required options. Its one code is `usage`. */
export class UsageError extends PcsyncError {
  constructor(message: string) {
    super("usage", message);
  }
}

function indented(lines: readonly string[]): string {
  return lines.map((line) => `  ${line}`).join("\n");
}

const REFUSED_MESSAGES = {
  /** A saved plan the service moved away from since it was made. */
  stale_plan: ({ file, reasons }: { file: string; reasons: readonly string[] }) =>
    `the saved plan ${file} is stale:\n${indented(reasons)}\nNothing was changed. Make a new plan (\`pcsync plan -f <manifest> --out ${file}\`), review it, and apply that.`,
  /** A saved plan that does not hold together as the planner made it: edited by hand, or damaged. */
  plan_inconsistent: ({ file, problems }: { file: string; problems: readonly string[] }) =>
    `the saved plan ${file} was changed after it was made, and is not applied:\n${indented(problems)}\nNothing was changed. A saved plan is applied only as \`pcsync plan --out\` wrote it: make a new plan (\`pcsync plan -f <manifest> --out ${file}\`), review it, and apply that.`,
  plan_server_mismatch: ({
    file,
    planServer,
    server,
  }: {
    file: string;
    planServer: string;
    server: string;
  }) =>
    `the saved plan ${file} was made against ${planServer}, not ${server}. Nothing was changed. Point --base-url (or PCSYNC_BASE_URL) at the plan's server, or make a new plan.`,
  journal_server_mismatch: ({
    path,
    journalServer,
    server,
  }: {
    path: string;
    journalServer: string;
    server: string;
  }) =>
    `the journal ${path} is of a run against ${journalServer}, not ${server}. Nothing was changed. Point --base-url (or PCSYNC_BASE_URL) at the journal's server if that is the one you mean.`,
  /** The journal given to resume a saved plan is of another run. */
  journal_plan_mismatch: ({ path, planFile, why }: { path: string; planFile: string; why: string }) =>
    `the journal ${path} is not of an apply of ${planFile} (${why}). Give the journal of the apply of this plan with --journal PATH.`,
  /** Another run writes the journal (its lock names it): one writer per journal. */
  journal_held: ({
    journal,
    lock,
    holder,
    otherHost,
  }: {
    journal: string;
    lock: string;
    holder: { pid: number; host: string; since: string; command: string } | undefined;
    otherHost?: boolean;
  }) =>
    holder === undefined
      ? `the journal ${journal} is being written by another run (its lock ${lock} is being taken). Nothing was changed. Run this again once that run has ended.`
      : `the journal ${journal} is held by pid ${holder.pid} on host ${holder.host} (${holder.command}, since ${holder.since}): a journal has one writer. Nothing was changed. ${
          otherHost
            ? `pcsync cannot tell from this host whether that run still goes on: if it does not, delete ${lock} and run this again.`
            : "Run this again once that run has ended (stopping it with Ctrl-C or SIGTERM releases the lock)."
        }`,
  /** A rollback would bring back a record whose name a live record holds now. */
  rollback_name_taken: ({ journal, clashes }: { journal: string; clashes: readonly string[] }) =>
    `rolling back ${journal} would leave two live records of one name in a family:\n${indented(clashes)}\nNothing was changed, and --force does not change that: rename or delete one of them first (or pin it in your manifest), then run the rollback again.`,
  /** The state changed between the plan shown and the user's "yes": the plan is no longer the truth. */
  changed_while_asking: ({ reasons }: { reasons: readonly string[] }) =>
    `the remote state changed while apply waited for your answer:\n${indented(reasons)}\nNothing was changed. Run apply again to see the plan as it is now.`,
  /** `lead` says who refuses: apply, or plan (which refuses only a delete of a protected record). */
  safety_guard: ({ messages, lead }: { messages: readonly string[]; lead?: string | undefined }) =>
    `${lead ?? "refusing to apply"}:\n${indented(messages)}\nNothing was changed.`,
  /** Configs that match records another owner marked; `--takeover` is the way on. */
  owner_conflict: ({ problems }: { problems: readonly string[] }) =>
    `the plan is refused: records of another owner:\n${indented(problems)}`,
  /** Two owners claimed one record at once: the other's mark won (`problems`: one line each). */
  owner_claim_lost: ({ problems }: { problems: readonly string[] }) =>
    `another owner claimed records at the same time as this run, and its mark won:\n${indented(problems)}\nThose records are the other owner's now (this run's writes to them may have been overwritten): run \`pcsync plan\` to see them; to take one over, pass --takeover.`,
  /** Records a rollback would put back were changed since by someone else (`conflicts`: one line each). */
  rollback_conflict: ({ journal, conflicts }: { journal: string; conflicts: readonly string[] }) =>
    `records were changed since the run of ${journal}, by someone else:\n${indented(conflicts)}\nNothing was changed. Look at those changes first; to put back the journal's values over them, run the rollback again with --force.`,
} satisfies MessageTable;

export type RefusedCode = keyof typeof REFUSED_MESSAGES;

/** The refusals of a saved plan (or its journal) before anything is read or written. */
export const SAVED_PLAN_REFUSALS: readonly RefusedCode[] = [
  "stale_plan",
  "plan_inconsistent",
  "plan_server_mismatch",
  "journal_server_mismatch",
];

/** Refused by a guard or a check before anything is changed: exit code 3. */
export class RefusedError<Code extends RefusedCode = RefusedCode> extends PcsyncError {
  declare readonly code: Code;
  readonly facts: FactsOf<typeof REFUSED_MESSAGES, Code>;

  constructor(code: Code, facts: FactsOf<typeof REFUSED_MESSAGES, Code>) {
    super(code, messageOf(REFUSED_MESSAGES, code, facts), {
      exitCode: EXIT_REFUSED,
    });
    this.facts = facts;
  }
}
