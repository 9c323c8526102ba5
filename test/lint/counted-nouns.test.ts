// What pcsync prints counts in words: `1 change undone`, `3 records`, never `1 change(s)`. A noun
// with "(s)" in a message's text is written with plural() (src/plural.ts) or a choice of words.

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

/** `file:line` of each line of code (not a comment) with a word followed by "(s)" in its text. */
function countedNounsInCode(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line, index) => {
      const code = line.trimStart();
      if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) return [];
      // http(s) names a scheme, not a count.
      return /[a-z]\(s\)/i.test(code.replace(/https?\(s\)|http\(s\)/g, ""))
        ? [`${relative(ROOT, file)}:${index + 1}`]
        : [];
    });
}

it("no message of src/ writes a noun as word(s)", () => {
  expect(sourceFiles(join(ROOT, "src")).flatMap(countedNounsInCode)).toEqual([]);
});
