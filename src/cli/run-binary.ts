// The run of the `pcsync` binary, loaded by main.ts once signals are held. The process's stdout
// and stderr are put behind the output edge (secrets redacted at write time), and a stream that
// fails ends the run with one line on stderr and a defined exit code, never a stack trace.

import { EXIT_ERROR } from "../errors.js";
import { withOutputEdge } from "./cli-io.js";
import { listenForStopSignals } from "./early-signals.js";
import {
  describeFinishedDespiteLoss,
  describeStoppedByLoss,
  exitCodeAfterLoss,
  isQuietLoss,
  type OutputLoss,
} from "./output-edge.js";
import { runCli } from "./program.js";

const { stdout, stderr, stdin, env } = process;
const io = withOutputEdge({ stdout, stderr, stdin, env, cwd: process.cwd() }, { onLoss: stopOnOutputLoss });
const { edge } = io;

/**
 * A command that only reads (plan, export, logs --follow...) stops as soon as nobody can read
 * its output: quietly for a reader that went away (`pcsync plan | head`), with one line otherwise.
 * apply and job go on (see OutputEdge.keepRunningFor) and say so when they end.
 */
function stopOnOutputLoss(loss: OutputLoss): void {
  if (edge.keepRunningFor !== undefined) return;
  const line = describeStoppedByLoss(loss);
  if (line !== undefined) edge.stderr.write(line);
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
const command = edge.keepRunningFor;
const lossLine =
  command === undefined ? undefined : describeFinishedDespiteLoss(edge.losses, command, exitCode);
if (lossLine !== undefined) edge.stderr.write(lossLine);
process.exitCode = exitCodeAfterLoss(exitCode, edge.losses);
// The command has ended (its output may still be flushing, a connection still closing): a signal now
// has nothing left to stop, and the process ends with the exit code the run decided, where Node
// would otherwise end it as killed by the signal (an apply that made every change, seen as stopped).
listenForStopSignals(process, () => process.exit());
