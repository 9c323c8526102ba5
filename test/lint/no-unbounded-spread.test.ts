// No array spread into a call's arguments in src/ (`push(...x)`, `Math.max(...x)`, `fn(...list)`):
// each element becomes an argument, and past about 120,000 of them the call throws a RangeError.
// A spread known to be small is allowed with a `bounded-spread:` comment saying why, on its line
// or the line before.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const MARKER = "bounded-spread:";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** `file:line: text` of each spread into a call's arguments that no marker allows. */
function findUnboundedSpreads(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const lines = text.split("\n");
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isSpreadElement(node) &&
      (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent)) &&
      node.parent.arguments?.includes(node)
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const allowed = [lines[line], lines[line - 1]].some((candidate) => candidate?.includes(MARKER));
      if (!allowed) found.push(`${fileName}:${line + 1}: ${lines[line]?.trim()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("no unbounded spread into a call in src/", () => {
  it("finds a spread into a call, and takes a marker on the line or the one before", () => {
    const code = [
      "a.push(...b);",
      "Math.max(1, ...c);",
      "new Set(...d);",
      "a.push(...e); // bounded-spread: two families",
      "// bounded-spread: the log types",
      "Math.max(...f);",
      "const g = [...h, ...i];",
      "const j = { ...k };",
      "f(x, [...l]);",
    ].join("\n");
    expect(findUnboundedSpreads("x.ts", code)).toEqual([
      "x.ts:1: a.push(...b);",
      "x.ts:2: Math.max(1, ...c);",
      "x.ts:3: new Set(...d);",
    ]);
  });

  it("has none outside the allowed ones", () => {
    const found = sourceFiles(join(ROOT, "src"))
      .map((path) => relative(ROOT, path).split("\\").join("/"))
      .flatMap((path) => findUnboundedSpreads(path, readFileSync(join(ROOT, path), "utf8")));
    expect(found).toEqual([]);
  });
});
