// Files that ship at the package root (schemas/, package.json): found by walking up from this
// module, since it runs from src/ in tests and from dist/src/ once built.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { asRecord } from "./plain-object.js";

export function findPackageFile(relative: string): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, relative);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`pcsync is incomplete: cannot find ${relative} in its package`);
    directory = parent;
  }
}

let versionCache: string | undefined;

export function packageVersion(): string {
  if (versionCache !== undefined) return versionCache;
  const parsed: unknown = JSON.parse(readFileSync(findPackageFile("package.json"), "utf8"));
  const version = asRecord(parsed)?.version;
  versionCache = typeof version === "string" ? version : "0.0.0";
  return versionCache;
}
