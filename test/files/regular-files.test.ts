// The directories pcsync looks through for its own files pass over anything that is not a regular
// file: the one helper's rule, then each scan that goes through it, with a FIFO (which would hold a
// read forever) and a directory under a journal's name beside nothing else.

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { regularFilesIn } from "../../src/files/regular-files.js";
import { DEFAULT_JOURNAL_DIR, findJournalOfPlan } from "../../src/journal/journal-format.js";
import { pruneHealJournals } from "../../src/journal/prune-heal-journals.js";
import { findLatestRollout, ROLLOUT_JOURNAL_DIR } from "../../src/rollout/rollout-journal.js";

async function directoryWithOddEntries(under: string, name: (kind: string) => string): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), "pcsync-regular-"));
  const directory = join(cwd, under);
  await mkdir(directory, { recursive: true });
  execFileSync("mkfifo", [join(directory, name("fifo"))]);
  await mkdir(join(directory, name("directory")));
  await symlink(join(directory, name("fifo")), join(directory, name("link-to-fifo")));
  await symlink(join(directory, "nowhere"), join(directory, name("dangling")));
  return cwd;
}

describe("the files of a directory pcsync looks through", () => {
  it("are its regular files and links to one, by the end of their names", async () => {
    const cwd = await directoryWithOddEntries("d", (kind) => `${kind}.jsonl`);
    const directory = join(cwd, "d");
    await writeFile(join(directory, "file.jsonl"), "");
    await writeFile(join(directory, "other.txt"), "");
    await symlink(join(directory, "file.jsonl"), join(directory, "link-to-file.jsonl"));
    expect((await regularFilesIn(directory, ".jsonl")).sort()).toEqual(["file.jsonl", "link-to-file.jsonl"]);
    expect(await regularFilesIn(join(cwd, "missing"), ".jsonl")).toEqual([]);
  });

  // Each would wait forever on the FIFO if it read it.
  it.each([
    [
      "apply --plan --resume's search for the plan's journal",
      DEFAULT_JOURNAL_DIR,
      ".jsonl",
      async (cwd: string) => expect(await findJournalOfPlan(cwd, "f")).toBeUndefined(),
    ],
    [
      "a rollout's search for its journal",
      ROLLOUT_JOURNAL_DIR,
      ".jsonl",
      async (cwd: string) =>
        expect(await findLatestRollout(cwd, "http://127.0.0.1:1", new Set(["d"]))).toBeUndefined(),
    ],
    [
      "a heal's pruning of old heal journals",
      DEFAULT_JOURNAL_DIR,
      "-heal.jsonl",
      async (cwd: string) => expect(await pruneHealJournals(cwd, 1)).toEqual([]),
    ],
  ])(
    "%s passes over anything else",
    async (_what, under, suffix, scan) => {
      const cwd = await directoryWithOddEntries(
        under,
        (kind) => `2026-01-01T00-00-0${kind.length % 10}Z-${kind}${suffix}`,
      );
      await scan(cwd);
    },
    10_000,
  );
});
