// Reads the manifest files (or directories of *.yaml/*.yml) and var files the user named, refusing
// what is not one before parsing it: huge files, devices, binary data, non-UTF-8.

import type { Stats } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { extname, isAbsolute, join, normalize, relative, resolve } from "node:path";
import { readBoundedBytes } from "../files/read-json-file.js";
import { formatBytes } from "../format-bytes.js";
import { compareText } from "./compare-projects.js";
import { type ManifestDiagnostic, makeError, makeWarning, WHOLE_FILE } from "./diagnostics.js";

export interface ManifestSource {
  /** As the user named it. */
  file: string;
  text: string;
}

interface ReadLimits {
  // High, as one project's family cannot be split across files (20,000 configs are about 1.4 MB):
  // it only stops a file that is no manifest from filling memory.
  maxFileBytes: number;
  /** It holds `NAME: value` lines, and may be a pipe or a device. */
  maxVarFileBytes: number;
  maxFiles: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_READ_LIMITS = {
  maxFileBytes: 64 * MIB,
  maxVarFileBytes: MIB,
  maxFiles: 1000,
} as const satisfies ReadLimits;

export const DEFAULT_MANIFEST_PATH = "pcsync.yaml";

const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml"]);

export async function readManifestSources(
  paths: readonly string[],
  cwd: string,
  limits: ReadLimits = DEFAULT_READ_LIMITS,
): Promise<{ sources: ManifestSource[]; errors: ManifestDiagnostic[]; warnings: ManifestDiagnostic[] }> {
  const sources: ManifestSource[] = [];
  const errors: ManifestDiagnostic[] = [];
  const warnings: ManifestDiagnostic[] = [];
  const fail = (file: string, problem: string) => errors.push(makeError(file, WHOLE_FILE, problem));
  const seen = new Map<string, string>();
  const usingDefault = paths.length === 0;
  const given = usingDefault ? [DEFAULT_MANIFEST_PATH] : paths;

  const files: { display: string; absolute: string }[] = [];
  for (const path of given) {
    const absolute = resolve(cwd, path);
    const display = displayPath(path, cwd);
    const hint = usingDefault
      ? "; create it (see examples/pcsync.yaml) or name the manifest with -f PATH"
      : "; check the path given to -f";
    const info = await statPath(absolute, `no such file or directory${hint}`);
    if (typeof info === "string") {
      fail(display, info);
      continue;
    }
    if (info.isDirectory()) {
      const entries = await readdir(absolute, { withFileTypes: true }).catch(() => undefined);
      if (entries === undefined) {
        fail(display, "cannot list this directory; check its permissions");
        continue;
      }
      // Sorted so that the order of files (and of their messages) is the same on every machine.
      const names = entries
        .filter(
          (entry) =>
            (entry.isFile() || entry.isSymbolicLink()) && MANIFEST_EXTENSIONS.has(extname(entry.name)),
        )
        .map((entry) => entry.name)
        .sort(compareText);
      if (names.length === 0) {
        fail(display, "directory has no *.yaml or *.yml files; add a manifest or name one with -f");
        continue;
      }
      for (const name of names) files.push({ display: join(display, name), absolute: join(absolute, name) });
      continue;
    }
    files.push({ display, absolute });
  }

  if (files.length > limits.maxFiles) {
    fail(
      files[0]?.display ?? ".",
      `${files.length} manifest files given; at most ${limits.maxFiles} are read`,
    );
    return { sources, errors, warnings };
  }

  for (const { display, absolute } of files) {
    const earlier = seen.get(absolute);
    if (earlier !== undefined) {
      warnings.push(makeWarning(display, WHOLE_FILE, `same file as ${earlier}; read once`));
      continue;
    }
    seen.set(absolute, display);
    const result = await readManifestFile(absolute, limits);
    if (typeof result === "string") sources.push({ file: display, text: result });
    else fail(display, result.problem);
  }
  return { sources, errors, warnings };
}

async function readManifestFile(absolute: string, limits: ReadLimits): Promise<string | { problem: string }> {
  const info = await statPath(absolute, "no such file (a broken link?)");
  if (typeof info === "string") return { problem: info };
  // A device or pipe could be endless: only regular files are read.
  if (!info.isFile())
    return { problem: "not a regular file; give a YAML manifest file or a directory of them" };
  if (info.size > limits.maxFileBytes) return { problem: describeOversize(info.size, limits.maxFileBytes) };
  const bytes = await readFile(absolute).catch((error: unknown) => error);
  if (!(bytes instanceof Buffer)) return { problem: "cannot read the file; check its permissions" };
  // The file grew between stat and read.
  if (bytes.length > limits.maxFileBytes)
    return { problem: describeOversize(bytes.length, limits.maxFileBytes) };
  return decodeManifestText(bytes);
}

const STAT_PROBLEMS: Partial<Record<string, string>> = {
  ELOOP:
    "symbolic link loop: the link leads back to itself (or through more than 40 links); point it at a real file",
  EACCES: "permission denied; check the permissions of the file and of the directories above it",
  EPERM: "permission denied; check the permissions of the file and of the directories above it",
  ENOTDIR: "a part of the path is a file, not a directory; check the path",
  ENAMETOOLONG: "the path is too long",
};

/** Or why it cannot be read, in words; `missing` for a path that does not exist. */
async function statPath(absolute: string, missing: string): Promise<Stats | string> {
  try {
    return await stat(absolute);
  } catch (error) {
    return STAT_PROBLEMS[(error as NodeJS.ErrnoException).code ?? ""] ?? missing;
  }
}

function describeOversize(size: number, limit: number): string {
  return `file is ${size} bytes, over the ${formatBytes(limit)} limit for one manifest file; split it into several files (by project: a project's families may sit in different files) and pass them all with -f, or a directory of them`;
}

export async function readVarFiles(
  paths: readonly string[],
  cwd: string,
  limits: ReadLimits = DEFAULT_READ_LIMITS,
): Promise<{ sources: ManifestSource[]; errors: ManifestDiagnostic[] }> {
  const sources: ManifestSource[] = [];
  const errors: ManifestDiagnostic[] = [];
  for (const path of paths) {
    const display = displayPath(path, cwd);
    const result = await readVarFile(resolve(cwd, path), limits.maxVarFileBytes);
    if (typeof result === "string") sources.push({ file: display, text: result });
    else errors.push(makeError(display, WHOLE_FILE, result.problem));
  }
  return { sources, errors };
}

async function readVarFile(absolute: string, maxBytes: number): Promise<string | { problem: string }> {
  const info = await statPath(absolute, "no such file; check the path given to --var-file");
  if (typeof info === "string") return { problem: info };
  if (info.isDirectory())
    return { problem: "is a directory; --var-file takes a YAML file of `NAME: value` lines" };
  const read = await readBoundedBytes(absolute, maxBytes);
  if (read.problem === undefined) return decodeManifestText(read.value);
  if (read.problem.kind === "too_large")
    return {
      problem: `file is over the ${formatBytes(maxBytes)} limit for a var file; a var file holds \`NAME: value\` lines: keep large data out of it`,
    };
  const code = read.problem.kind === "missing" ? "ENOENT" : read.problem.code;
  return {
    problem:
      code === "EACCES" || code === "EPERM"
        ? "cannot read the file; check its permissions"
        : `cannot read the file (${code ?? "unknown error"})`,
  };
}

/** Without a byte-order mark. */
function decodeManifestText(bytes: Uint8Array): string | { problem: string } {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return { problem: "file is UTF-16 text; save it as UTF-8" };
  }
  if (bytes.includes(0)) return { problem: "file is binary (it contains NUL bytes), not YAML text" };
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { problem: "file is not valid UTF-8 text; save it as UTF-8" };
  }
}

/** For messages: as given, or relative to the working directory when under it. */
function displayPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return normalize(path);
  const fromCwd = relative(cwd, path);
  if (fromCwd !== "" && !fromCwd.startsWith("..") && !isAbsolute(fromCwd)) return fromCwd;
  return normalize(path);
}
