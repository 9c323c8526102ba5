// What a command may touch of the outside world, injected so tests can run commands in-process.

import type { Readable } from "node:stream";
import { redactDeep, SecretRegistry } from "../redact.js";
import type { RunIo } from "../run/run-io.js";
import { OutputEdge, type OutputLoss } from "./output-edge.js";

export interface CliIo extends RunIo {
  /** Read only for apply's confirmation, and only when it is a terminal. */
  stdin?: Readable & { isTTY?: boolean };
  /** The redacting edge that `stdout` and `stderr` belong to; files and renderers count redactions here. */
  edge?: OutputEdge;
}

export type GivenIo = Omit<CliIo, "secrets"> & { secrets?: SecretRegistry | undefined };

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

export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  return stream.isTTY === true;
}
