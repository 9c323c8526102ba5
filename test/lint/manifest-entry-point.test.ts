// The manifest reader has one entry point: outside src/manifest/, code loads manifests through
// src/manifest/index.ts only, so its figures (time, memory) are those of one path. A few leaf
// modules that read no manifest may be imported directly, so that a command that only formats a
// position or suggests a name does not load the reader.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");
const MANIFEST = join(SRC, "manifest");

/** What may be imported from outside: the entry point, and modules that load nothing of the reader. */
const ALLOWED = new Set([
  "index.ts",
  // Types only: nothing at run time.
  "types.ts",
  // `file:line:col` of a source position.
  "diagnostics.ts",
  // "did you mean": closest names.
  "suggest.ts",
  // The machine-independent order of names and ids.
  "compare-projects.ts",
  // The defaults of `rollout:`: constants the rollout's gate falls back on.
  "rollout-defaults.ts",
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** `file: specifier` of each import of a src/manifest module other than the allowed ones. */
function importsPastTheEntryPoint(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/\bfrom\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)/g)].flatMap(
    (match) => match[1] ?? match[2] ?? [],
  );
  return specifiers.flatMap((specifier) => {
    const target = resolve(join(file, ".."), specifier.replace(/\.js$/, ".ts"));
    const inManifest = relative(MANIFEST, target);
    if (inManifest.startsWith("..") || ALLOWED.has(inManifest)) return [];
    return [`${relative(ROOT, file).split("\\").join("/")}: ${specifier}`];
  });
}

describe("the manifest reader's one entry point", () => {
  it("finds a deep import, static or dynamic, and lets the entry point and leaf modules pass", () => {
    const file = join(SRC, "cli", "x.ts");
    const text = [
      'import { loadManifests } from "../manifest/index.js";',
      'import type { DesiredState } from "../manifest/types.js";',
      'import { parseYamlInFull } from "../manifest/load-yaml.js";',
      'const m = await import("../manifest/merge.js");',
    ].join("\n");
    expect(importsPastTheEntryPoint(file, text)).toEqual([
      "src/cli/x.ts: ../manifest/load-yaml.js",
      "src/cli/x.ts: ../manifest/merge.js",
    ]);
  });

  it("is the only way into src/manifest/ from the rest of src/", () => {
    const found = sourceFiles(SRC)
      .filter((file) => relative(MANIFEST, file).startsWith(".."))
      .flatMap((file) => importsPastTheEntryPoint(file, readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });
});
