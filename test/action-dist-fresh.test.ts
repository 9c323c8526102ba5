// The committed action-dist/ is what action.yml runs at a ref. It must be the bundle of the
// sources beside it: the build writes a fresh one to dist/bundle/, and the two must agree
// file for file and byte for byte (`npm run bundle` rewrites the committed copy).

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPOSITORY } from "./support/paths.js";

function filesUnder(root: string): string[] {
  const found: string[] = [];
  const walk = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else found.push(relative(root, path));
    }
  };
  walk(root);
  return found.sort();
}

describe("the committed action bundle", () => {
  it("is the bundle the build makes from these sources (run npm run bundle after changing src/)", () => {
    const committed = join(REPOSITORY, "action-dist");
    const fresh = join(REPOSITORY, "dist", "bundle");
    const files = filesUnder(fresh);
    expect(filesUnder(committed)).toEqual(files);
    const stale = files.filter(
      (file) => !readFileSync(join(committed, file)).equals(readFileSync(join(fresh, file))),
    );
    expect(stale, "stale files in action-dist/: run npm run bundle and commit it").toEqual([]);
  });
});
