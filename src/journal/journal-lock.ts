// A journal's one writer holds `<journal>.lock` (pid, host, since), taken atomically before the first
// line and released at the end; a lock whose process is gone (same host) is stale and taken over.

import { randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, open, readFile, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { PRIVATE_FILE_MODE } from "../files/write-file.js";
import { InputError } from "../input-error.js";
import { type LockSubject, RefusedError } from "../refused-error.js";

export interface LockHolder {
  pid: number;
  host: string;
  since: string;
  command: string;
  /** Unique to this taking of the lock: a release removes only its own lock. */
  token: string;
  /** Linux: the kernel's boot id, and the process's start time in ticks since boot (pid reuse). */
  boot?: string;
  started?: string;
}

export function lockPathOf(journalPath: string): string {
  return `${journalPath}.lock`;
}

/** Locks this process holds, by absolute lock path: an in-process run's lock is live, not stale. */
const heldHere = new Map<string, string>();
/**
 * Locks this process is creating, by token: a process ended between the file appearing and `heldHere`
 * knowing it must not leave it behind. Only the exit hook reads this (for `isStale` it is not held).
 */
const creatingHere = new Map<string, Set<string>>();
let exitHookInstalled = false;

// `process.exit` (a second Ctrl-C) runs no `finally`: locks go on exit, synchronously. Only SIGKILL
// or a crash of the machine leaves one.
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    const ours = new Map<string, Set<string>>(creatingHere);
    for (const [path, token] of heldHere) ours.set(path, new Set(ours.get(path)).add(token));
    for (const [path, tokens] of ours) {
      try {
        const token = parseHolder(readFileSync(path, "utf8"))?.token;
        if (token !== undefined && tokens.has(token)) unlinkSync(path);
      } catch {
        // Gone already, or unreadable: nothing of ours to remove.
      }
    }
  });
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The kernel's boot id (Linux): a lock from before a reboot names no running process. */
function bootId(): string | undefined {
  return readProc("/proc/sys/kernel/random/boot_id")?.trim();
}

/** Linux /proc/PID/stat: state (field 3; Z: exited, not reaped) and start time in ticks (field 22). */
function procStat(pid: number): { state: string; started: string | undefined } | undefined {
  const text = readProc(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "", started: fields[19] };
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (
      typeof value.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.since === "string" &&
      typeof value.token === "string"
    )
      return { command: "a run", ...value } as LockHolder;
  } catch {
    // Not a lock pcsync wrote whole: judged below by its age.
  }
  return undefined;
}

/** Whether the process a lock names has gone: only a lock of this host can be judged. */
export function isStale(holder: LockHolder, path: string): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return heldHere.get(path) !== holder.token;
  const boot = bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: a process of another user has that pid: alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  // A zombie (ended, its parent has not reaped it: a run killed under a shell or an init that
  // does not wait) answers the signal but runs nothing: gone. Alive: the same process unless its
  // pid was given to another since (its start time differs).
  const stat = procStat(holder.pid);
  if (stat === undefined) return false;
  if (stat.state === "Z" || stat.state === "X") return true;
  return holder.started !== undefined && stat.started !== undefined && stat.started !== holder.started;
}

export function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid} on host ${holder.host} (${holder.command}, since ${holder.since})`;
}

// A lock file that does not read as one (a kill between creating and writing it, where links are
// not supported) is stale once this old: a writer fills it within milliseconds.
const UNREADABLE_STALE_MS = 10_000;

export class JournalLock {
  #released = false;

  private constructor(
    /** Absolute. */
    readonly path: string,
    /** As the user gave the journal. */
    readonly journal: string,
    readonly holder: LockHolder,
    readonly tookOver: LockHolder | undefined,
  ) {}

  /** Takes the lock, or refuses (exit 3) naming the run that holds it; a stale lock is taken over. */
  static async acquire(
    journal: string,
    options: { cwd: string; command: string; held?: LockSubject },
  ): Promise<JournalLock> {
    const path = resolve(options.cwd, lockPathOf(journal));
    const boot = bootId();
    const started = procStat(process.pid)?.started;
    const holder: LockHolder = {
      pid: process.pid,
      host: hostname(),
      since: new Date().toISOString(),
      command: options.command,
      token: randomBytes(8).toString("hex"),
      ...(boot === undefined ? {} : { boot }),
      ...(started === undefined ? {} : { started }),
    };
    const text = `${JSON.stringify(holder)}\n`;
    let tookOver: LockHolder | undefined;
    // A few rounds: a stale lock removed here may be taken by another run first.
    for (let round = 0; round < 5; round++) {
      installExitHook();
      const creating = creatingHere.get(path) ?? new Set<string>();
      creatingHere.set(path, creating.add(holder.token));
      let created: boolean;
      try {
        created = await createExclusively(path, text, journal);
        if (created) heldHere.set(path, holder.token);
      } finally {
        creating.delete(holder.token);
        if (creating.size === 0) creatingHere.delete(path);
      }
      if (created) return new JournalLock(path, journal, holder, tookOver);
      const found = await readHolder(path);
      if (found === "gone") continue;
      if (found === "young") throw heldBy(journal, path, undefined, options.held);
      if (found === "unreadable") {
        await removeIfUnchanged(path, undefined);
        continue;
      }
      if (!isStale(found, path)) throw heldBy(journal, path, found, options.held);
      // Whichever run then creates the lock took a stale one over, whoever removed it: say so.
      tookOver = found;
      await removeIfUnchanged(path, found.token);
    }
    throw heldBy(journal, path, undefined, options.held);
  }

  /** Refuses as `acquire` would, without taking the lock (`held`: what the lock guards, in words). */
  static async refuseIfHeld(journal: string, options: { cwd: string; held?: LockSubject }): Promise<void> {
    const path = resolve(options.cwd, lockPathOf(journal));
    const found = await readHolder(path);
    if (found === "young") throw heldBy(journal, path, undefined, options.held);
    if (typeof found === "object" && !isStale(found, path)) throw heldBy(journal, path, found, options.held);
  }

  /** One this process holds (a rollout's journals of its earlier waves) is this run's own. */
  static async heldElsewhere(journal: string, options: { cwd: string }): Promise<boolean> {
    const path = resolve(options.cwd, lockPathOf(journal));
    const found = await readHolder(path);
    if (found === "young") return true;
    return typeof found === "object" && !isStale(found, path) && heldHere.get(path) !== found.token;
  }

  /** The live run that holds the lock (a stale lock is no one's). */
  static async holder(journal: string, options: { cwd: string }): Promise<LockHolder | undefined> {
    const path = resolve(options.cwd, lockPathOf(journal));
    const found = await readHolder(path);
    return typeof found === "object" && !isStale(found, path) ? found : undefined;
  }

  /** Removes the lock if it is still this run's; idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    heldHere.delete(this.path);
    const found = await readHolder(this.path);
    if (typeof found === "object" && found.token === this.holder.token)
      await unlink(this.path).catch(() => undefined);
  }

  get takeOverNote(): string | undefined {
    if (this.tookOver === undefined) return undefined;
    return `note: ${this.journal} was locked by ${describeHolder(this.tookOver)}, which is no longer running; this run took the lock over`;
  }
}

/** O_EXCL, synced. */
async function writeNew(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Creates the lock file whole, atomically: written under a name of its own, then linked to the lock's
 * name (a link fails if it exists). Where links are not supported, O_EXCL.
 */
async function createExclusively(path: string, text: string, journal: string): Promise<boolean> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  const fail = (error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const reason = `cannot create its lock ${path}: ${(error as Error).message}`;
    // A directory this user may not write: for a journal that is only read, the caller decides.
    if (["EACCES", "EROFS", "EPERM"].includes(code))
      throw new InputError("journal_unlockable", { path: journal, reason });
    throw new InputError("journal_unwritable", { path: journal, reason });
  };
  try {
    await writeNew(temporary, text);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    return fail(error);
  }
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") return fail(error);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  try {
    await writeNew(path, text);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    return fail(error);
  }
}

/** 0 when the file is gone. */
function ageMs(path: string): Promise<number> {
  return stat(path).then(
    (info) => Date.now() - info.mtimeMs,
    () => 0,
  );
}

/** `holder` undefined: a lock being written, or taken in turn by others. */
function heldBy(
  journal: string,
  lock: string,
  holder: LockHolder | undefined,
  held: LockSubject | undefined,
): RefusedError {
  const otherHost = holder === undefined ? {} : { otherHost: holder.host !== hostname() };
  return new RefusedError("journal_held", { journal, lock, holder, ...otherHost, held });
}

async function readHolder(path: string): Promise<LockHolder | "gone" | "unreadable" | "young"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
  const holder = parseHolder(text);
  if (holder !== undefined) return holder;
  // Too young to judge: being written (O_EXCL fallback); held meanwhile.
  return (await ageMs(path)) < UNREADABLE_STALE_MS ? "young" : "unreadable";
}

/**
 * Removes a stale lock, unless another run replaced it since it was judged: the removal goes
 * through a breaker file taken with O_EXCL, and the lock is read again under it.
 */
async function removeIfUnchanged(path: string, token: string | undefined): Promise<void> {
  const breaker = `${path}.break`;
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(breaker, "wx", PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Another run is removing it; a breaker left by a kill goes once it is old.
    if ((await ageMs(breaker)) > UNREADABLE_STALE_MS) await unlink(breaker).catch(() => undefined);
    await new Promise((done) => setTimeout(done, 50));
    return;
  }
  try {
    await handle.close();
    const now = await readHolder(path);
    const same = token === undefined ? now === "unreadable" : typeof now === "object" && now.token === token;
    if (same) await unlink(path).catch(() => undefined);
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
}
