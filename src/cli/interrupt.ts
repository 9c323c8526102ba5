// Ctrl-C and SIGTERM during apply: before any write the run ends at once; after, the first lets the
// writes in flight finish, so that the summary says what the server holds, and a second exits.

import type { Writable } from "node:stream";
import { type InterruptSignal, SIGNAL_EXIT_CODES } from "../errors.js";
import {
  describeStopBeforeChanges,
  holdAfterCommand,
  listenForStopSignals,
  releaseEarlySignals,
} from "./early-signals.js";

export interface InterruptWatch {
  readonly signal: AbortSignal;
  readonly received: InterruptSignal | undefined;
  beginWrites(): void;
  /** What a signal before the writes prints (`undefined`: the default); the prompt says "cancelled". */
  setStopMessage(message: string | undefined): void;
}

export async function withInterruptWatch(
  stderr: Writable,
  run: (interrupts: InterruptWatch) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  let writing = false;
  let received: InterruptSignal | undefined;
  let stopMessage: string | undefined;

  const stopListening = listenForStopSignals((name) => {
    const code = SIGNAL_EXIT_CODES[name];
    // At a question nothing is in flight, even after earlier writes (a rollout's undo asks for
    // each wave): the run ends at once, as before any write.
    if (!writing || stopMessage !== undefined) {
      stderr.write(stopMessage ?? describeStopBeforeChanges(name));
      process.exit(code);
    }
    if (received !== undefined) {
      stderr.write(
        `pcsync: ${name} received again: exiting at once. Changes in flight may or may not have been made: run \`pcsync plan\` to see what the server holds.\n`,
      );
      process.exit(code);
    }
    received = name;
    const again = name === "SIGINT" ? "press Ctrl-C again" : "send SIGTERM again";
    stderr.write(
      `pcsync: ${name} received: no new change will start; waiting for the requests in flight to finish (${again} to exit at once).\n`,
    );
    controller.abort(new Error(`interrupted by ${name}`));
  });
  // Listening now: the hold of the binary's start (early-signals.ts) can go, with no gap between.
  releaseEarlySignals();
  try {
    await run({
      signal: controller.signal,
      get received() {
        return received;
      },
      beginWrites() {
        writing = true;
      },
      setStopMessage(message) {
        stopMessage = message;
      },
    });
  } finally {
    // Held first: with no listener between the two, a signal would end the process by itself.
    holdAfterCommand();
    stopListening();
  }
}
