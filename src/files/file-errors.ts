// Why a file pcsync was asked to write was not written, said so that a user can act on it: the
// path they gave, never a temporary one, and what to do instead.

import { dirname } from "node:path";
import { describeError } from "../errors.js";
import { InputError, isInputError } from "../input-error.js";

/**
 * A file pcsync was asked to write (`-o`, the step summary, a journal) that the system refused:
 * `output_unwritable`, the reason in words, naming `path` as the user gave it. One already said
 * so is returned as it is.
 */
export function outputUnwritable(path: string, error: unknown): InputError {
  if (isInputError(error, ...OUTPUT_CODES)) return error;
  return new InputError(
    "output_unwritable",
    { path, reason: describeFileError(error, path) },
    { cause: error },
  );
}

/** The codes of a file pcsync was asked to write and did not. */
export const OUTPUT_CODES = ["output_unwritable", "output_refused", "output_is_input"] as const;

/** A file system error as a user can act on it, naming the path they gave, not a temporary one. */
export function describeFileError(error: unknown, path: string): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case "ENOENT":
    case "ENOTDIR":
      return `the directory ${dirname(path)} does not exist; create it or choose another path`;
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "permission denied; choose a path you can write to";
    case "EISDIR":
      return "it is a directory; give a file name";
    case "ENOSPC":
      return "no space left on the device";
    case "EDQUOT":
      return "disk quota exceeded";
    case "EFBIG":
      return "the file is too large for the device";
    case "EIO":
      return "input/output error on the device";
    case "EPIPE":
      return "the reader went away before everything was written";
    case "ENXIO":
      return "nothing is there to receive it (a FIFO without a reader, or a socket); start the reader first, or give a file name";
    case "ELOOP":
      return "it is a loop of symbolic links; give a file name";
    default:
      return describeError(error);
  }
}
