// The files pcsync looks through a directory for (its journals, its rollout journals), by the end of
// their names: regular files only, a link to one followed. Anything else under such a name (a FIFO,
// a device, a directory) is passed over unread, since a FIFO would hold the read forever; a
// directory that cannot be listed holds none.

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
