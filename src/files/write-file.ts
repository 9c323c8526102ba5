// The one way pcsync writes a file: atomically and durably (temporary file, fsync, rename, fsync of the
// directory), so that a reader, a crash or a full disk never leaves half of it; a device as it is.

import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { outputUnwritable } from "./file-errors.js";
import { type OutputTarget, type RunInput, refuseInput, resolveOutputTarget } from "./output-target.js";

/** Plan or state data (records, keys): only its owner may read it. */
export const PRIVATE_FILE_MODE = 0o600;

export interface WriteFileOptions {
  cwd: string;
  inputs?: readonly RunInput[];
  /** Whatever it was before. PRIVATE_FILE_MODE unless said. */
  mode?: number;
  /** The path as the user gave it, for messages. */
  shown?: string;
}

/**
 * Returns where it went, so that a message can say "saved" of a file and "written to" of a device.
 * Throws InputError (`output_*`); a failed write leaves no temporary file behind.
 */
export async function writeFileSafely(
  path: string,
  content: string | Uint8Array,
  options: WriteFileOptions,
): Promise<OutputTarget> {
  const shown = options.shown ?? path;
  const target = await resolveOutputTarget(path, { ...options, shown });
  try {
    if (target.kind === "file") {
      await replaceAtomically(target.path, content, options.mode ?? PRIVATE_FILE_MODE, target.existing);
    } else {
      await writeThrough(target, content, options, shown);
    }
  } catch (error) {
    throw outputUnwritable(shown, error);
  }
  return target;
}

/** `.NAME.`; each ends in `.tmp`. */
export function temporaryFilePrefix(file: string): string {
  return `.${basename(file)}.`;
}

async function replaceAtomically(
  file: string,
  content: string | Uint8Array,
  mode: number,
  existing: Stats | undefined,
): Promise<void> {
  const random = randomBytes(6).toString("hex");
  const temporary = join(dirname(file), `${temporaryFilePrefix(file)}${process.pid}.${random}.tmp`);
  // Created afresh ("wx" does not follow a link either), private until it is complete.
  const handle = await open(temporary, "wx", PRIVATE_FILE_MODE);
  try {
    try {
      await handle.writeFile(content);
      // Set, not masked by the umask, and whatever mode the file it replaces had.
      await handle.chmod(mode);
      await keepOwner(handle, existing);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    // A full disk must not also keep the space a half-written copy takes.
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
}

/** Root replacing someone's file (`sudo pcsync export -o theirs.yaml`) leaves it theirs. */
async function keepOwner(handle: FileHandle, existing: Stats | undefined): Promise<void> {
  if (existing === undefined || process.geteuid?.() !== 0) return;
  if (existing.uid !== 0 || existing.gid !== 0) await handle.chown(existing.uid, existing.gid);
}

/** Makes a rename or a new name durable, where the file system lets a directory be synced. */
export async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(directory, "r");
    await handle.sync();
  } catch {
    // The data itself is synced; only the name's durability is left to the file system.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * A device or FIFO is written as it is (`-o /dev/null`, `-o /dev/tty`); an open descriptor
 * (`-o /dev/stdout`, `-o >(jq .)`) is appended to, so that what the shell redirected is not
 * truncated. A FIFO nobody reads is an error at once rather than a wait for ever.
 */
async function writeThrough(
  target: Extract<OutputTarget, { kind: "through" }>,
  content: string | Uint8Array,
  options: WriteFileOptions,
  shown: string,
): Promise<void> {
  // Fails with ENXIO when no reader has the FIFO open; kept open until the real handle is, so that a
  // reader (`cat FIFO`) does not see the end of its input in between and go away.
  const probe =
    target.device === "FIFO" ? await open(target.path, constants.O_WRONLY | constants.O_NONBLOCK) : undefined;
  const append = target.device === "open descriptor" ? constants.O_APPEND : 0;
  let handle: FileHandle;
  try {
    handle = await open(target.path, constants.O_WRONLY | constants.O_NOCTTY | append);
  } finally {
    await probe?.close();
  }
  try {
    // An open descriptor may be a regular file the run reads.
    await refuseInput(undefined, await handle.stat(), options, shown);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}
