// Signals while pcsync starts, before the command has handling of its own: the binary holds them
// first thing, so that one ends the run with "Nothing was changed" instead of silently.
// apply and rollback take the signals over once their handling is in place; every other command
// lets go as its action starts, so a signal during its requests (a job's POST) is never reported as
// having changed nothing. SIGHUP is a reload for watch (systemd's ExecReload), held from the first
// module to the exit; other commands leave it, so a terminal that hangs up still ends them.

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
 * A reload may come at any moment (while watch starts, or drains its webhooks at the stop), and none
 * may end it: the hold stays until exit, remembering a SIGHUP until watch listens itself.
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

/** Called once a command's own listeners are installed, or as the action of one without any starts. */
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
