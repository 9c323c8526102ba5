// pcsync's files in a directory (its journals), by the end of their names: regular files only (a FIFO
// would hold the read forever), links followed; a directory that cannot be listed holds none.

import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

export async function regularFilesIn(directory: string, suffix: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const entry of entries) {
    if (!entry.name.endsWith(suffix)) continue;
    const isFile =
      entry.isFile() ||
      (entry.isSymbolicLink() &&
        (await stat(join(directory, entry.name)).then(
          (info) => info.isFile(),
          () => false,
        )));
    if (isFile) names.push(entry.name);
  }
  return names;
}
