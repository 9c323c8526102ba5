// The error model: the base of every error pcsync reports (a stable code, an exit code, a message that
// says what to do next), the exit codes, and the tables its four kinds are made of.

import { inspect } from "node:util";
import { redactDeep, type SecretRegistry } from "./redact.js";

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_CHANGES = 2;
export const EXIT_REFUSED = 3;
/** A rollout halted by a failed health check (and rolled back, with `on_failure: rollback`). */
export const EXIT_ROLLOUT_HALTED = 4;
/** 128 + the signal's number, as shells report it. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export type InterruptSignal = "SIGINT" | "SIGTERM";

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

/** `exit`: the class's own when left out; `hint`: what to check when the message cannot be sure. */
export interface ErrorEntry<Facts> {
  exit?: ExitCode | ((facts: Facts) => ExitCode);
  message: (facts: Facts) => string;
  hint?: (facts: Facts) => string | undefined;
}

/** A new kind of error is a new code in a table, not a new class. (`never`: any entry's facts fit.) */
export type ErrorTable = Record<string, ErrorEntry<never>>;

export type FactsOf<Table extends ErrorTable, Code extends keyof Table> = Parameters<
  Table[Code]["message"]
>[0];

/** `classExit`: the exit code of the codes that name none. */
export function describeCode<Table extends ErrorTable, Code extends keyof Table & string>(
  table: Table,
  code: Code,
  facts: FactsOf<Table, Code>,
  classExit: ExitCode = EXIT_ERROR,
): { message: string; exitCode: ExitCode; hint: string | undefined } {
  const entry = table[code] as unknown as ErrorEntry<FactsOf<Table, Code>>;
  return {
    message: entry.message(facts),
    exitCode: typeof entry.exit === "function" ? entry.exit(facts) : (entry.exit ?? classExit),
    hint: entry.hint?.(facts),
  };
}

/**
 * The base of InputError (fix what pcsync was given), ServiceError (the service or the network),
 * RefusedError (exit 3) and RunError (a run that did not finish); src/cli/program.ts catches it once.
 */
export abstract class PcsyncError extends Error {
  /** Stable, machine-readable (e.g. `manifest_invalid`, `api_error`). */
  readonly code: string;
  readonly exitCode: ExitCode;
  /** Printed on its own line. */
  readonly hint?: string;

  protected constructor(
    code: string,
    described: { message: string; exitCode: ExitCode; hint: string | undefined },
    options: {
      cause?: unknown;
      /** The secrets the error may quote (the client's key): its inspect and JSON redact them. */
      secrets?: SecretRegistry | undefined;
    } = {},
  ) {
    super(described.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = described.exitCode;
    if (described.hint !== undefined) this.hint = described.hint;
    this.#secrets = options.secrets;
  }

  readonly #secrets: SecretRegistry | undefined;

  // An error may quote the API key from what a server sent: inspecting it or turning it into JSON
  // redacts too, so a log line or a crash report made of it never carries the key.
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

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
