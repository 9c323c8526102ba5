// Appending to a file that grows (a journal, the step summary): a regular file only, private, created
// with its directory synced.

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { dirname } from "node:path";
import { outputRefused, outputUnwritable } from "./file-errors.js";
import { describeDevice, resolveOutputTarget } from "./output-target.js";
import { PRIVATE_FILE_MODE, syncDirectory, type WriteFileOptions } from "./write-file.js";

/** Throws InputError (`output_refused`, `output_unwritable`) for anything but a regular file. */
export async function openForAppend(
  path: string,
  options: Omit<WriteFileOptions, "mode">,
): Promise<FileHandle> {
  const shown = options.shown ?? path;
  const target = await resolveOutputTarget(path, { ...options, shown });
  if (target.kind !== "file") {
    throw outputRefused(
      shown,
      `it is ${describeDevice(target.device)}, not a file; this output is appended to and kept, so give a file name`,
    );
  }
  let handle: FileHandle | undefined;
  try {
    // O_NOFOLLOW and O_NONBLOCK: if the path changed since it was looked at, a link is refused and
    // a FIFO does not block; both show up in the check below.
    handle = await open(
      target.path,
      constants.O_WRONLY |
        constants.O_APPEND |
        constants.O_CREAT |
        constants.O_NOFOLLOW |
        constants.O_NONBLOCK |
        constants.O_NOCTTY,
      PRIVATE_FILE_MODE,
    );
    const info = await handle.stat();
    if (!info.isFile()) {
      throw outputRefused(shown, "it changed into something that is not a regular file; give a file name");
    }
    if ((info.mode & 0o777) !== PRIVATE_FILE_MODE) {
      // Another user's file (the runner's step summary) keeps its mode where only its owner may change it.
      await handle.chmod(PRIVATE_FILE_MODE).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EPERM") throw error;
      });
    }
    if (target.existing === undefined) await syncDirectory(dirname(target.path));
    return handle;
  } catch (error) {
    await handle?.close().catch(() => undefined);
    throw outputUnwritable(shown, error);
  }
}

/** Written, then synced. */
export async function appendToFile(
  path: string,
  text: string,
  options: Omit<WriteFileOptions, "mode">,
): Promise<void> {
  const handle = await openForAppend(path, options);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    throw outputUnwritable(options.shown ?? path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
