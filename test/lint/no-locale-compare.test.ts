// pcsync's orders (diagnostics, plans, journals found, the emulator's lists) are the same on every
// machine: text is compared by code unit (compareText in src/manifest/compare-projects.ts), never
// with localeCompare, whose order follows the machine's locale and ICU version.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

it("no code of src/ compares text with localeCompare", () => {
  const found = sourceFiles(join(ROOT, "src")).flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line, index) => {
        const code = line.trimStart();
        if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return [];
        return /\blocaleCompare\s*\(/.test(code) ? [`${relative(ROOT, file)}:${index + 1}`] : [];
      }),
  );
  expect(found).toEqual([]);
});
