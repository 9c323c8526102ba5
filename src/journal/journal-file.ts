// The journal's file: append-only, opened through the one way pcsync appends to a file (a regular
// file only, 0600, never one of the run's inputs). Lines are buffered and reach the disk in
// groups: one fsync covers every line appended while the previous fsync ran, so writes in flight
// together share one sync.

import { type FileHandle, open } from "node:fs/promises";
import { resolve } from "node:path";
import { openForAppend } from "../files/append-file.js";
import { describeDevice, type RunInput, resolveOutputTarget } from "../files/output-target.js";
import { InputError } from "../input-error.js";

/**
 * The last `bytes` of the file (all of it when it is shorter) and its size: what a journal's end
 * (a line cut off by a kill, a run that ended, a run that wrote nothing) is judged by.
 */
export async function readTail(path: string, bytes: number): Promise<{ size: number; text: string }> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const { buffer } = await handle.read(Buffer.alloc(length), 0, length, size - length);
    return { size, text: buffer.toString("utf8") };
  } finally {
    await handle.close();
  }
}

/** `fresh`: the journal must not exist yet; `inputs`: the run's inputs, never written to. */
type OpenOptions = { fresh: boolean; cwd: string; inputs: readonly RunInput[] };

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
   * Opens `path` (relative to `cwd`) for appending; `fresh`: it must not exist yet (a journal holds
   * one run). An existing file (a resumed apply) is appended to; if it ends in a cut-off line, the
   * next line starts afresh.
   */
  static async openForAppend(path: string, options: OpenOptions): Promise<JournalFile> {
    const { cwd, inputs } = options;
    await JournalFile.checkTarget(path, options);
    // A file that ends in a line cut off by a kill (no final newline).
    const tail = options.fresh ? undefined : await readTail(resolve(cwd, path), 1);
    const cutOff = tail !== undefined && tail.size > 0 && tail.text !== "\n";
    const file = new JournalFile(path, await openForAppend(path, { cwd, inputs, shown: path }));
    if (cutOff) file.#pending = "\n";
    return file;
  }

  /** Throws what opening `path` would refuse: one of the run's inputs; `fresh`, a file there already. */
  static async checkTarget(path: string, options: OpenOptions): Promise<void> {
    const { cwd, inputs } = options;
    const target = await resolveOutputTarget(path, { cwd, inputs, shown: path });
    if (target.kind !== "file")
      throw new InputError("journal_unwritable", {
        path,
        reason: `it is ${describeDevice(target.device)}, not a file; a journal is appended to and kept, so give a file name`,
      });
    if (options.fresh && target.existing !== undefined) {
      throw new InputError("journal_unwritable", {
        path,
        reason:
          "it exists already (a journal holds one run: give a new path; to finish an interrupted saved plan, use apply --plan FILE --resume)",
      });
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
      this.#failure = new InputError("journal_unwritable", {
        path: this.path,
        reason: (error as Error).message,
      });
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
