// The manual's links and the files it names lead somewhere: a page moved, a heading renamed or a
// test file deleted shows up here instead of as a dead link or a guarantee that names no test.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY } from "./support/paths.js";

const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(REPOSITORY, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The page's text outside fenced code blocks, line by line. */
function proseLines(page: string): string[] {
  let fenced = false;
  return readFileSync(join(REPOSITORY, page), "utf8")
    .split("\n")
    .map((line) => {
      if (line.startsWith("```")) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(page: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of proseLines(page)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(slugOf(heading));
  }
  return anchors;
}

describe("the manual", () => {
  it.each(PAGES)("%s: every relative link leads to a page and a heading that exist", (page) => {
    const broken: string[] = [];
    proseLines(page).forEach((line, index) => {
      for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? "";
        if (/^[a-z]+:/.test(target)) continue;
        const [path = "", anchor] = target.split("#");
        const file = path === "" ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(REPOSITORY, file)))
          broken.push(`${page}:${index + 1}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(file).has(anchor))
          broken.push(`${page}:${index + 1}: ${target} (no such heading)`);
      }
    });
    expect(broken).toEqual([]);
  });

  it.each(PAGES)("%s: every file of the repository it names in code exists", (page) => {
    const missing: string[] = [];
    proseLines(page).forEach((line, index) => {
      for (const match of line.matchAll(/`((?:src|test|bench|examples|schemas|scripts|docs)\/[\w./-]+)`/g)) {
        const path = match[1] ?? "";
        if (path.includes("*") || path.endsWith("/")) continue;
        if (!existsSync(join(REPOSITORY, path))) missing.push(`${page}:${index + 1}: ${path}`);
      }
    });
    expect(missing).toEqual([]);
  });
});
