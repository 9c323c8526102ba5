// Paths given to -f and --var-file that cannot be read say why: a symbolic link loop is a loop,
// not "no such file"; a missing file is missing; inside a directory, the same.

import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readManifestSources, readVarFiles } from "../../src/manifest/read-files.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
  await symlink("loop-b.yaml", join(work.path, "loop-a.yaml"));
  await symlink("loop-a.yaml", join(work.path, "loop-b.yaml"));
  await symlink("self.yaml", join(work.path, "self.yaml"));
  await mkdir(join(work.path, "dir"));
  await symlink("inner.yaml", join(work.path, "dir", "inner.yaml"));
});
afterAll(() => work.remove());

const messages = (errors: readonly { file: string; message: string }[]) =>
  errors.map((error) => `${error.file}: ${error.message}`);

describe("an unreadable -f or --var-file path", () => {
  it("is reported as a symbolic link loop: two links to each other, a link to itself, one inside a directory", async () => {
    const read = await readManifestSources(["loop-a.yaml", "self.yaml", "dir", "missing.yaml"], work.path);
    expect(messages(read.errors)).toEqual([
      expect.stringMatching(/^loop-a\.yaml: symbolic link loop: the link leads back to itself/),
      expect.stringMatching(/^self\.yaml: symbolic link loop/),
      "missing.yaml: no such file or directory; check the path given to -f",
      expect.stringMatching(/^dir\/inner\.yaml: symbolic link loop/),
    ]);
    const vars = await readVarFiles(["self.yaml"], work.path);
    expect(messages(vars.errors)).toEqual([expect.stringMatching(/^self\.yaml: symbolic link loop/)]);
  });
});
