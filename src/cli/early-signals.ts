// Signals while pcsync starts, before the command has handling of its own: the binary holds them
// first thing, so that one ends the run with "Nothing was changed" instead of silently.

import { type InterruptSignal, SIGNAL_EXIT_CODES } from "../errors.js";

export function describeStopBeforeChanges(name: InterruptSignal): string {
  return `pcsync: ${name} received before any change was made: stopped. Nothing was changed.\n`;
}

let releaseHeld: (() => void) | undefined;
/** Never set in a run in-process, whose listeners must go. */
let inBinary = false;
let heldAfterCommand = false;

/** Listens for SIGINT and SIGTERM until `releaseEarlySignals()`; a second call changes nothing. */
export function holdEarlySignals(argv: readonly string[]): void {
  if (releaseHeld !== undefined) return;
  inBinary = true;
  releaseHeld = listenForStopSignals((name) => {
    process.stderr.write(describeStopBeforeChanges(name));
    process.exit(SIGNAL_EXIT_CODES[name]);
  });
  if (withoutNoColor(argv)[0] === "watch") holdHangUps();
}

/** `argv` without the program's --no-color, which runCli takes anywhere before `--`. */
export function withoutNoColor(argv: readonly string[]): readonly string[] {
  const end = argv.indexOf("--");
  return argv.filter((arg, index) => !(arg === "--no-color" && (end === -1 || index < end)));
}

let hangUpWaiting = false;
let hangUpsTaken = false;

/**
 * SIGHUP is a reload for watch (systemd's ExecReload), at any moment (as it starts, as it drains its
 * webhooks at the stop): held until exit, and remembered until watch listens itself. Other commands
 * leave it, so a terminal that hangs up still ends them.
 */
function holdHangUps(): void {
  process.on("SIGHUP", () => {
    if (!hangUpsTaken) hangUpWaiting = true;
  });
}

/** Called by watch once it listens for SIGHUP: whether one came before. */
export function takeEarlyHangUp(): boolean {
  hangUpsTaken = true;
  const waiting = hangUpWaiting;
  hangUpWaiting = false;
  return waiting;
}

export function listenForStopSignals(onSignal: (name: InterruptSignal) => void): () => void {
  const onInt = () => onSignal("SIGINT");
  const onTerm = () => onSignal("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return () => {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  };
}

/** The first SIGINT or SIGTERM aborts `run`'s signal; a second then ends the process as usual. */
export async function untilStopSignal<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const dispose = listenForStopSignals(() => {
    dispose();
    controller.abort();
  });
  try {
    return await run(controller.signal);
  } finally {
    dispose();
  }
}

/**
 * Called by apply and rollback once their own handling listens, and as any other command's action
 * starts: a signal during its requests (a job's POST) must not be reported as having changed nothing.
 */
export function releaseEarlySignals(): void {
  releaseHeld?.();
  releaseHeld = undefined;
}

/** The binary only: once a command stops listening, a signal must not end the process as if stopped. */
export function holdAfterCommand(): void {
  if (!inBinary || heldAfterCommand) return;
  heldAfterCommand = true;
  listenForStopSignals(() => undefined);
}

/** Their signal handling (interrupt.ts) releases the hold once it listens. */
export const COMMANDS_HANDLING_SIGNALS: ReadonlySet<string> = new Set(["apply", "rollback"]);
