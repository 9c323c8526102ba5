// What a path given for output is, decided before anything is written: a file to replace, a device,
// FIFO or open descriptor to write through, or refused (also when it is one of the run's inputs).

import type { Stats } from "node:fs";
import { lstat, readlink, realpath, stat } from "node:fs/promises";
import { dirname, extname, resolve } from "node:path";
import { InputError } from "../input-error.js";
import { outputRefused, outputUnwritable } from "./file-errors.js";

/** An output may not be it. */
export interface RunInput {
  /** A directory stands for its *.yaml/*.yml. */
  path: string;
  /** For the message: "the manifest", "a var file (--var-file)". */
  what: string;
}

export type OutputTarget =
  /** Replaced atomically; `path` is the file itself, links followed. */
  | { kind: "file"; path: string; existing: Stats | undefined }
  /** Opened and written as it is, never created, renamed over or chmod-ed. */
  | { kind: "through"; path: string; device: "character device" | "FIFO" | "open descriptor" };

export function describeDevice(device: Extract<OutputTarget, { kind: "through" }>["device"]): string {
  return device === "open descriptor" ? `an ${device}` : `a ${device}`;
}

// As Linux's own limit on links followed in one path lookup.
const MAX_LINKS = 40;

/** Throws InputError: `output_refused`, `output_is_input`, `output_unwritable` (reading the path). */
export async function resolveOutputTarget(
  path: string,
  options: { cwd: string; inputs?: readonly RunInput[]; shown?: string },
): Promise<OutputTarget> {
  const shown = options.shown ?? path;
  // Where a command means standard output by `-`, it says so before this; anywhere else a file
  // named `-` is a surprise, not what was meant.
  if (path === "-")
    throw outputRefused(
      shown,
      "- is not standard output here: pcsync writes this to a file; give its name (./- for a file named -)",
    );
  const target = await followToTarget(resolve(options.cwd, path), shown);
  if (target.kind === "file") await refuseInput(target.path, target.existing, options, shown);
  return target;
}

async function followToTarget(start: string, shown: string): Promise<OutputTarget> {
  let current = start;
  for (let links = 0; links <= MAX_LINKS; links += 1) {
    const info = await lstatOrUndefined(current, shown);
    if (info === undefined) {
      if (links === 0) return { kind: "file", path: current, existing: undefined };
      throw outputRefused(
        shown,
        `it is a symbolic link to ${current}, which does not exist; pcsync does not create files through links: give the target's path, or create it first`,
      );
    }
    if (info.isSymbolicLink()) {
      const directory = await realpath(dirname(current)).catch((error: unknown) => {
        throw outputUnwritable(shown, error);
      });
      // /dev/stdout, /dev/fd/N, /proc/self/fd/N: a descriptor this process holds, as the shell opened it.
      if (directory === "/proc" || directory.startsWith("/proc/")) {
        return { kind: "through", path: start, device: "open descriptor" };
      }
      await refuseForeignLinkInSharedDirectory(info, directory, shown);
      current = resolve(directory, await readlink(current));
      continue;
    }
    if (info.isFile()) return { kind: "file", path: current, existing: info };
    if (info.isCharacterDevice()) return { kind: "through", path: current, device: "character device" };
    if (info.isFIFO()) return { kind: "through", path: current, device: "FIFO" };
    if (info.isDirectory()) throw outputRefused(shown, "it is a directory; give a file name");
    if (info.isSocket())
      throw outputRefused(shown, "it is a socket, which cannot be written as a file; give a file name");
    throw outputRefused(shown, "it is a block device, not a file; give a file name");
  }
  throw outputRefused(shown, "it is a loop of symbolic links (or more than 40 in a row); give a file name");
}

async function lstatOrUndefined(path: string, shown: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw outputUnwritable(shown, error);
  }
}

const STICKY = 0o1000;
const WORLD_WRITABLE = 0o002;

/**
 * The rule of Linux's fs.protected_symlinks, which a rename does not apply: in a sticky directory
 * anyone may write (/tmp), a link is followed only when it belongs to this user or to the
 * directory's owner. Otherwise another user could point it at a file of ours.
 */
async function refuseForeignLinkInSharedDirectory(
  link: Stats,
  directory: string,
  shown: string,
): Promise<void> {
  const uid = process.geteuid?.();
  if (uid === undefined || link.uid === uid) return;
  const parent = await stat(directory);
  if ((parent.mode & STICKY) === 0 || (parent.mode & WORLD_WRITABLE) === 0 || link.uid === parent.uid) return;
  throw outputRefused(
    shown,
    `it is a symbolic link in the shared directory ${directory} that belongs to another user (uid ${link.uid}); pcsync does not follow it there, as Linux's protected_symlinks would not: give the target's path, or remove the link`,
  );
}

const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml"]);

/** By device and inode, not by path text; `path` undefined: an opened output without one. */
export async function refuseInput(
  path: string | undefined,
  existing: Stats | undefined,
  options: { cwd: string; inputs?: readonly RunInput[] },
  shown: string,
): Promise<void> {
  const inputs = options.inputs ?? [];
  if (inputs.length === 0 || (existing !== undefined && !existing.isFile())) return;
  const parent = path === undefined ? undefined : await stat(dirname(path)).catch(() => undefined);
  const manifestLike = path !== undefined && MANIFEST_EXTENSIONS.has(extname(path).toLowerCase());
  for (const input of inputs) {
    const info = await stat(resolve(options.cwd, input.path)).catch(() => undefined);
    if (info === undefined) continue;
    if (existing !== undefined && sameFile(info, existing)) {
      throw isInput(shown, `it is ${input.what} (${input.path})`);
    }
    // A directory of manifests reads every *.yaml in it: a file written there is read next time.
    if (info.isDirectory() && manifestLike && parent !== undefined && sameFile(info, parent)) {
      throw isInput(shown, `it would be one of the manifest files in ${input.path}, ${input.what}`);
    }
  }
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function isInput(shown: string, clause: string): InputError {
  return new InputError("output_is_input", {
    path: shown,
    reason: `${clause}, which this run reads; the output would replace it: give another path for the output`,
  });
}
