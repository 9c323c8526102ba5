// The base of every error pcsync reports to a user: a stable code, an exit code, and a message
// that says what to do next. The CLI maps these to exit codes in one place.

import { inspect } from "node:util";
import { redactDeep, secrets } from "./redact.js";

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_CHANGES = 2;
export const EXIT_REFUSED = 3;
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
  | typeof EXIT_SIGINT
  | typeof EXIT_SIGTERM;

/**
 * An error class's messages: one entry per stable code, from what an error of that code knows (its
 * facts) to what it says. A new kind of error is a new code in a table, not a new class.
 */
export type MessageTable = Record<string, (facts: never) => string>;

/** What an error of `code` knows, as its table's entry takes it. */
export type FactsOf<Table extends MessageTable, Code extends keyof Table> = Parameters<Table[Code]>[0];

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
    options: { exitCode?: ExitCode; cause?: unknown; hint?: string | undefined } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? EXIT_ERROR;
    if (options.hint !== undefined) this.hint = options.hint;
  }

  // An error may quote what a server sent, the API key included; it is shown where output leaves
  // the process, redacted there. Inspecting it or turning it into JSON redacts too, so a log line
  // or a crash report made of it never carries the key.
  [inspect.custom](_depth: number, options: object): string {
    const shown = new Error(this.message, this.cause === undefined ? undefined : { cause: this.cause });
    Object.defineProperty(shown, "stack", { value: this.stack, enumerable: false });
    Object.assign(shown, this);
    return secrets.redact(inspect(shown, options)).text;
  }

  toJSON(): Record<string, unknown> {
    return redactDeep({ ...Object.fromEntries(Object.entries(this)), name: this.name, message: this.message })
      .value;
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

/** What an error says, for a message that quotes it: its message, or the thrown value as text. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A command-line usage error: bad flag values, missing required options. */
export class UsageError extends PcsyncError {
  constructor(message: string) {
    super("usage", message);
  }
}
