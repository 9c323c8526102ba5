// Temporary directories for the manifests, plans and key files a test writes, removed by the test.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export type WriteFile = (name: string, content: string) => Promise<string>;

export interface WorkDir {
  path: string;
  /**
   * Writes a file under a name of its own (`name` with a counter before it) and returns its path:
   * tests that run concurrently never read one another's half-written file.
   */
  write: WriteFile;
  remove: () => Promise<void>;
}

export async function temporaryDirectory(): Promise<WorkDir> {
  const path = await mkdtemp(join(tmpdir(), "pcsync-test-"));
  let written = 0;
  return {
    path,
    write: async (name, content) => {
      const file = join(path, `${++written}-${name}`);
      await writeFile(file, content);
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/** Writes `text` to `directory/name` exactly, for a test that names the file. */
export async function writeManifest(directory: string, text: string, name = "pcsync.yaml"): Promise<string> {
  const file = join(directory, name);
  await writeFile(file, text, "utf8");
  return file;
}
