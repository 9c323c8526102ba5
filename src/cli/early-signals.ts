// Ctrl-C or SIGTERM while pcsync starts (its modules load, the arguments are read), before the
// command that runs has signal handling of its own: without a listener Node would end the process
// silently, so the binary holds the signals first thing, and such a signal ends the run with the
// line an apply gives before its writes: nothing was changed. The commands that write and account
// for a signal (apply, rollback) take the signals over once their handling is in place; every
// other command lets go as its action starts (watch and serve install their own handling there),
// so a signal during another command's requests (a job's POST) is never reported as having
// changed nothing.
// SIGHUP, which Node's default also makes fatal, is a reload for `watch` (systemd's ExecReload): a
// run of watch holds it too, from the first module to the exit (holdHangUps); other commands leave
// it as it is, so a terminal that hangs up still ends them.

import { type InterruptSignal, SIGNAL_EXIT_CODES } from "../errors.js";

/** The line a signal before any change prints, newline included. */
export function describeStopBeforeChanges(name: InterruptSignal): string {
  return `pcsync: ${name} received before any change was made: stopped. Nothing was changed.\n`;
}

let releaseHeld: (() => void) | undefined;
/** Set once the binary holds the signals (never in a run in-process, whose listeners must go). */
let inBinary = false;
let heldAfterCommand = false;

/**
 * Listens for SIGINT and SIGTERM until `releaseEarlySignals()`; a second call changes nothing.
 * `argv`, the binary's arguments: a run of watch holds SIGHUP as well.
 */
export function holdEarlySignals(argv: readonly string[]): void {
  if (releaseHeld !== undefined) return;
  inBinary = true;
  releaseHeld = listenForStopSignals((name) => {
    process.stderr.write(describeStopBeforeChanges(name));
    process.exit(SIGNAL_EXIT_CODES[name]);
  });
  // The command the run names, read as runCli reads it.
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
 * watch reads its manifest again on SIGHUP, and a reload (systemctl reload) may come at any moment,
 * also while its modules load or its client and server start, or while it drains its webhooks at
 * the stop: none of those may end it. The hold stays until the process exits; before watch listens
 * itself, a SIGHUP is remembered for it (takeEarlyHangUp), after that the hold only keeps it alive.
 */
function holdHangUps(): void {
  process.on("SIGHUP", () => {
    if (!hangUpsTaken) hangUpWaiting = true;
  });
}

/**
 * Called by watch once it listens for SIGHUP: whether one came before (always false without the
 * binary's hold). Later ones are watch's own.
 */
export function takeEarlyHangUp(): boolean {
  hangUpsTaken = true;
  const waiting = hangUpWaiting;
  hangUpWaiting = false;
  return waiting;
}

/** Calls `onSignal` on the process's SIGINT and SIGTERM; the function returned stops listening. */
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

/**
 * Runs `run` with a signal that the first SIGINT or SIGTERM aborts (serve stops, logs --follow
 * ends); both listeners go with it, or at the end of `run`, so that a second signal of either kind
 * ends the process as usual.
 */
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
 * Stops holding the signals: called once a command's own listeners are installed, or as the
 * action of a command without any starts. Without a hold (the CLI run in-process), nothing happens.
 */
export function releaseEarlySignals(): void {
  releaseHeld?.();
  releaseHeld = undefined;
}

/**
 * The binary only: from the moment a command that handles signals stops listening until the
 * process exits, a signal has nothing left to stop. It is held (ignored) here, where Node would
 * end the process by it, as if the run had been stopped; run-binary.ts then ends the process with
 * the run's own exit code on a signal that comes while output flushes or connections close.
 */
export function holdAfterCommand(): void {
  if (!inBinary || heldAfterCommand) return;
  heldAfterCommand = true;
  listenForStopSignals(() => undefined);
}

/** Commands whose signal handling (interrupt.ts) releases the hold once it listens. */
export const COMMANDS_HANDLING_SIGNALS: ReadonlySet<string> = new Set(["apply", "rollback"]);
