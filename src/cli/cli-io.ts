// What a command may touch of the outside world, injected so tests can run commands in-process.

import type { Readable } from "node:stream";
import { redactDeep, SecretRegistry } from "../redact.js";
import type { RunIo } from "../run/run-io.js";
import { OutputEdge, type OutputLoss } from "./output-edge.js";

export interface CliIo extends RunIo {
  /**
   * Where `apply` reads its confirmation from, when it is a terminal. Absent, or not a terminal
   * (CI, a pipe, /dev/null): nothing is ever read and nothing is asked.
   */
  stdin?: Readable & { isTTY?: boolean };
  /**
   * The redacting edge that `stdout` and `stderr` belong to. runCli puts streams behind one when
   * it is not given one; the human-readable files and renderers count their redactions here.
   */
  edge?: OutputEdge;
}

/** What a caller gives runCli: the secrets default to a registry of the run's own. */
export type GivenIo = Omit<CliIo, "secrets"> & { secrets?: SecretRegistry | undefined };

/** `io` with its secrets, and with its streams behind a new output edge that redacts them. */
export function withOutputEdge(
  io: GivenIo,
  onLoss?: (loss: OutputLoss) => void,
): CliIo & { edge: OutputEdge } {
  const secrets = io.secrets ?? new SecretRegistry();
  const edge = new OutputEdge({ stdout: io.stdout, stderr: io.stderr }, { onLoss, registry: secrets });
  return { ...io, secrets, stdout: edge.stdout, stderr: edge.stderr, edge };
}

/** A copy of `value` with the API key redacted, for a renderer that cuts or diffs long strings. */
export function redactForDisplay<T>(value: T, io: CliIo): T {
  return io.edge === undefined ? redactDeep(value, io.secrets).value : io.edge.redactForDisplay(value);
}

/** Colour on a stream: NO_COLOR disables, FORCE_COLOR enables, else only on a TTY. */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  return stream.isTTY === true;
}
