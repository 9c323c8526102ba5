// The base of every error pcsync reports to a user: a stable code, an exit code, and a message
// that says what to do next. The CLI maps these to exit codes in one place.

export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_CHANGES = 2;
export const EXIT_REFUSED = 3;
/** Ended by SIGINT (Ctrl-C) or SIGTERM: 128 + the signal's number, as shells report it. */
export const EXIT_SIGINT = 130;
export const EXIT_SIGTERM = 143;

export type ExitCode =
  | typeof EXIT_OK
  | typeof EXIT_ERROR
  | typeof EXIT_CHANGES
  | typeof EXIT_REFUSED
  | typeof EXIT_SIGINT
  | typeof EXIT_SIGTERM;

export class PcsyncError extends Error {
  /** Stable, machine-readable error code (e.g. `manifest_invalid`, `api_error`). */
  readonly code: string;
  /** The process exit code this error maps to. */
  readonly exitCode: ExitCode;

  constructor(code: string, message: string, options: { exitCode?: ExitCode; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? EXIT_ERROR;
  }
}

/** A command-line usage error: bad flag values, missing required options. */
export class UsageError extends PcsyncError {
  constructor(message: string) {
    super("usage", message);
  }
}
