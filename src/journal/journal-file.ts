// The journal's file: append-only, created 0600, a regular file only (never a device, FIFO or
// symlink). Lines are buffered and reach the disk in groups: one fsync covers every line appended
// while the previous fsync ran, so writes in flight together share one sync.

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { PcsyncError } from "../errors.js";

export const JOURNAL_FILE_MODE = 0o600;

export class JournalFileError extends PcsyncError {
  constructor(path: string, reason: string) {
    super("journal_unwritable", `cannot write the journal ${path}: ${reason}`, {
      hint: "give another path with --journal PATH, or skip the journal with --no-journal",
    });
  }
}

export class JournalFile {
  #pending = "";
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #failure: unknown;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /**
   * Opens `path` for appending, creating it 0600; `fresh`: the file must not exist yet (a journal
   * holds one apply). An existing file (a resumed apply) is appended to; if it ends in a cut-off
   * line (a run killed while writing it), the next line starts afresh.
   */
  static async openForAppend(path: string, options: { fresh: boolean }): Promise<JournalFile> {
    let handle: FileHandle;
    try {
      handle = await open(
        path,
        constants.O_RDWR |
          constants.O_APPEND |
          constants.O_CREAT |
          constants.O_NOFOLLOW |
          (options.fresh ? constants.O_EXCL : 0),
        JOURNAL_FILE_MODE,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new JournalFileError(
        path,
        code === "ELOOP"
          ? "it is a symbolic link"
          : code === "EEXIST"
            ? "it exists already (a journal holds one apply: give a new path; to finish an interrupted saved plan, use apply --plan FILE --resume)"
            : (error as Error).message,
      );
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new JournalFileError(path, "it is not a regular file");
      if ((stat.mode & 0o777) !== JOURNAL_FILE_MODE) await handle.chmod(JOURNAL_FILE_MODE);
      const file = new JournalFile(path, handle);
      if (stat.size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, stat.size - 1);
        if (last.toString() !== "\n") file.#pending = "\n";
      }
      return file;
    } catch (error) {
      await handle.close();
      throw error instanceof PcsyncError ? error : new JournalFileError(path, (error as Error).message);
    }
  }

  /** Buffers one line; `sync` puts it on disk. */
  append(line: string): void {
    this.#pending += `${line}\n`;
  }

  /** Resolves once every line appended so far is on disk (written and fsynced). */
  sync(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#running === undefined) {
      this.#running = this.#flush().finally(() => {
        this.#running = undefined;
      });
      return this.#running;
    }
    // One sync is under way: the lines appended since wait for the next, which they all share.
    this.#queued ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.sync();
      });
    return this.#queued;
  }

  async #flush(): Promise<void> {
    const text = this.#pending;
    this.#pending = "";
    if (text === "") return;
    try {
      await this.handle.write(text);
      await this.handle.sync();
    } catch (error) {
      this.#failure = new JournalFileError(this.path, (error as Error).message);
      throw this.#failure;
    }
  }

  /** Syncs what is left and closes the file. */
  async close(): Promise<void> {
    try {
      await this.sync();
    } finally {
      await this.handle.close();
    }
  }
}
