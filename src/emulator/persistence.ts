// The data file: loaded on start, and rewritten after changes. Every write goes to a temporary
// file that is fsynced and renamed over the data file, so a crash (even SIGKILL) leaves either the
// old or the new file, never a torn one. Writes are serialized, and changes that arrive during a
// write are coalesced into the single write after it. The file holds API keys and records: a new
// one is readable by its owner only (0600), and a file that exists keeps its mode.

import { open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { DataFileError, parseEmulatorData } from "./data-file.js";
import type { EmulatorData } from "./types.js";

function temporaryPrefix(file: string): string {
  return `.${basename(file)}.`;
}

/** Returns undefined when the file does not exist; throws DataFileError when it is not valid data. */
export async function loadDataFile(file: string): Promise<EmulatorData | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new DataFileError(`${file} is not valid JSON (${(error as Error).message})`);
  }
  try {
    return parseEmulatorData(parsed);
  } catch (error) {
    if (error instanceof DataFileError) throw new DataFileError(`${file}: ${error.message}`);
    throw error;
  }
}

/** Removes temporary files a killed emulator may have left next to the data file. */
export async function removeStaleTemporaryFiles(file: string): Promise<void> {
  const directory = dirname(file);
  const prefix = temporaryPrefix(file);
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return;
  }
  await Promise.all(
    names
      .filter((name) => name.startsWith(prefix) && name.endsWith(".tmp"))
      .map((name) => unlink(join(directory, name)).catch(() => undefined)),
  );
}

const NEW_FILE_MODE = 0o600;

async function existingMode(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mode & 0o777;
  } catch {
    return undefined;
  }
}

async function writeAtomically(file: string, text: string, sequence: number): Promise<void> {
  const temporary = join(dirname(file), `${temporaryPrefix(file)}${process.pid}.${sequence}.tmp`);
  const mode = (await existingMode(file)) ?? NEW_FILE_MODE;
  // Created afresh ("wx"): a leftover file or link of that name must not lend it its mode or target.
  await unlink(temporary).catch(() => undefined);
  const handle = await open(temporary, "wx", NEW_FILE_MODE);
  try {
    await handle.writeFile(text, "utf8");
    if (mode !== NEW_FILE_MODE) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  // Make the rename itself durable; not every platform lets a directory be opened, hence best effort.
  try {
    const directory = await open(dirname(file), "r");
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch {
    // The data is already safe in the renamed file.
  }
}

export class DataFileWriter {
  private readonly file: string;
  private readonly serialize: () => string;
  private sequence = 0;
  private running: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  /** `serialize` is called when a write starts, so it captures every change made before then. */
  constructor(file: string, serialize: () => string) {
    this.file = file;
    this.serialize = serialize;
  }

  /** Resolves once the state as of this call is on disk. */
  save(): Promise<void> {
    // A write not yet started will include this change too: share it.
    if (this.queued) return this.queued;
    const queued = this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        this.sequence += 1;
        return writeAtomically(this.file, this.serialize(), this.sequence);
      });
    this.queued = queued;
    this.running = queued;
    return queued;
  }

  /** Resolves when no write is running or queued. */
  async flush(): Promise<void> {
    while (this.queued) await this.queued.catch(() => undefined);
    await this.running.catch(() => undefined);
  }
}
