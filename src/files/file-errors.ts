// Why a file pcsync was asked to write was not written, said so that a user can act on it: the
// path they gave, never a temporary one, and what to do instead.

import { dirname } from "node:path";
import { describeError } from "../errors.js";
import { InputError, isInputError } from "../input-error.js";

/** The system refused a file pcsync was asked to write; an error already said so is returned as it is. */
export function outputUnwritable(path: string, error: unknown): InputError {
  if (isOutputError(error)) return error;
  return new InputError(
    "output_unwritable",
    { path, reason: describeFileError(error, path) },
    { cause: error },
  );
}

export function outputRefused(path: string, reason: string): InputError {
  return new InputError("output_refused", { path, reason });
}

const OUTPUT_CODES = ["output_unwritable", "output_refused", "output_is_input"] as const;

export function isOutputError(error: unknown): error is InputError<(typeof OUTPUT_CODES)[number]> {
  return isInputError(error, ...OUTPUT_CODES); // bounded-spread: three codes
}

const FILE_ERROR_WORDS: Readonly<Record<string, string>> = {
  EACCES: "permission denied; choose a path you can write to",
  EPERM: "permission denied; choose a path you can write to",
  EROFS: "permission denied; choose a path you can write to",
  EISDIR: "it is a directory; give a file name",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EFBIG: "the file is too large for the device",
  EIO: "input/output error on the device",
  EPIPE: "the reader went away before everything was written",
  ENXIO:
    "nothing is there to receive it (a FIFO without a reader, or a socket); start the reader first, or give a file name",
  ELOOP: "it is a loop of symbolic links; give a file name",
};

/** Naming the path the user gave, not a temporary one. */
export function describeFileError(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (code === "ENOENT" || code === "ENOTDIR")
    return `the directory ${dirname(path)} does not exist; create it or choose another path`;
  return FILE_ERROR_WORDS[code] ?? describeError(error);
}
