// The journal's append-only file (regular, 0600, never a run input). Lines reach the disk in groups:
// one fsync covers every line appended while the previous one ran, so writes in flight share a sync.

import { type FileHandle, open } from "node:fs/promises";
import { resolve } from "node:path";
import { openForAppend } from "../files/append-file.js";
import { describeDevice, type RunInput, resolveOutputTarget } from "../files/output-target.js";
import { InputError } from "../input-error.js";

/** The last `bytes` of the file and its size: what a journal's end (cut off, ended, empty) is judged by. */
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

  /** A journal holds one run; a resumed one is appended to, after a newline if it ends cut off. */
  static async openForAppend(path: string, options: OpenOptions): Promise<JournalFile> {
    const { cwd, inputs } = options;
    await JournalFile.checkTarget(path, options);
    const tail = options.fresh ? undefined : await readTail(resolve(cwd, path), 1);
    const cutOff = tail !== undefined && tail.size > 0 && tail.text !== "\n";
    const file = new JournalFile(path, await openForAppend(path, { cwd, inputs, shown: path }));
    if (cutOff) file.#pending = "\n";
    return file;
  }

  /** Throws what opening `path` would refuse. */
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

  async close(): Promise<void> {
    try {
      await this.sync();
    } finally {
      await this.handle.close();
    }
  }
}
