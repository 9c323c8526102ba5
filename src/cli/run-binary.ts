// The run of the `pcsync` binary, behind the output edge (secrets redacted at write time): a stream
// that fails ends the run with one line on stderr and a defined exit code, never a stack trace.

import { EXIT_CHANGES, EXIT_ERROR, EXIT_OK } from "../errors.js";
import { withOutputEdge } from "./cli-io.js";
import { listenForStopSignals } from "./early-signals.js";
import type { OutputLoss } from "./output-edge.js";
import { runCli } from "./program.js";

const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on the device",
  EIO: "input/output error",
  EPIPE: "the reader went away",
  EDQUOT: "disk quota exceeded",
  EFBIG: "the file is too large",
  EBADF: "the stream is closed",
};

function describeFailure(error: NodeJS.ErrnoException): string {
  if (error.code === undefined) return error.message;
  return `${ERRNO_WORDS[error.code] ?? error.message} (${error.code})`;
}

/** A reader that goes away (`pcsync plan | head`) is not an error. */
function isQuietLoss(loss: OutputLoss): boolean {
  return loss.error.code === "EPIPE";
}

const { stdout, stderr, stdin, env } = process;
const io = withOutputEdge({ stdout, stderr, stdin, env, cwd: process.cwd() }, stopOnOutputLoss);
const { edge } = io;

/** A command that only reads stops once nobody can read its output; apply and job go on (keepRunningFor). */
function stopOnOutputLoss(loss: OutputLoss): void {
  if (edge.keepRunningFor !== undefined) return;
  if (!isQuietLoss(loss))
    edge.stderr.write(
      `pcsync: cannot write to ${loss.stream}: ${describeFailure(loss.error)}; stopped, the output is lost\n`,
    );
  edge.finish();
  process.exit(isQuietLoss(loss) ? (process.exitCode ?? 0) : EXIT_ERROR);
}

// A bug must not print its stack (which may quote server text) past the redacting edge.
function reportInternalError(error: unknown): void {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  edge.stderr.write(`pcsync: internal error (please report it): ${message}\n`);
  edge.finish();
  process.exit(EXIT_ERROR);
}
process.on("uncaughtException", reportInternalError);
process.on("unhandledRejection", reportInternalError);

const exitCode = await runCli(process.argv.slice(2), io);
edge.finish();
const loss = edge.losses.find((item) => !isQuietLoss(item));
if (loss !== undefined && edge.keepRunningFor !== undefined) {
  const outcome = exitCode === EXIT_OK ? "succeeded" : `ended with exit code ${exitCode}`;
  edge.stderr.write(
    `pcsync: cannot write to ${loss.stream}: ${describeFailure(loss.error)}; the output is lost, but the ${edge.keepRunningFor} itself ran to the end and ${outcome}\n`,
  );
}
// A run whose output was lost has not succeeded (0) nor reported changes (2) to anyone, so it
// exits 1; a failure or refusal keeps its own code.
process.exitCode =
  loss !== undefined && (exitCode === EXIT_OK || exitCode === EXIT_CHANGES) ? EXIT_ERROR : exitCode;
// A signal now has nothing left to stop: the process ends with the run's exit code, where Node
// would end it as killed (an apply that made every change, seen as stopped).
listenForStopSignals(() => process.exit());
// Exit once stdout and stderr are drained, not when the event loop empties: as Node tears an
// emptied loop down it restores the signals' default action, and one then would kill it after all.
await Promise.all([stdout, stderr].map(drained));
process.exit();

function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (!stream.writableNeedDrain || stream.destroyed) return Promise.resolve();
  return new Promise((done) => {
    for (const event of ["drain", "close", "error"]) stream.once(event, () => done());
  });
}
