// A watcher's heal journals do not pile up: beyond the newest `keep`, the ended heal journals go;
// one that did not end (it may be resumed or rolled back), one a run holds (its lock), and any
// journal that is not a heal's stay, whatever their age.

import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultJournalPath } from "../../src/journal/apply-journal.js";
import { pruneHealJournals } from "../../src/journal/prune-heal-journals.js";
import { temporaryDirectory } from "../support/work-dir.js";

const HEADER = '{"type":"header","format":"pcsync-journal","version":1,"command":"heal"}\n';
const END = '{"type":"end","at":"2026-11-27T16:00:00.000Z","summary":{"done":1},"interrupted":false}\n';

describe("pruning heal journals", () => {
  it("keeps the newest, and every journal that did not end, is held, or is not a heal's", async ({
    onTestFinished,
  }) => {
    const dir = await temporaryDirectory();
    onTestFinished(() => dir.remove());
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 27, 10, minute));
    const journal = async (minute: number, label: string | undefined, text: string) => {
      const path = join(dir.path, defaultJournalPath(at(minute), label));
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, text);
      return path.split("/").pop() ?? path;
    };
    const oldEnded = await journal(1, "heal", HEADER + END);
    const oldUnended = await journal(2, "heal", HEADER);
    const oldHeld = await journal(3, "heal", HEADER + END);
    await writeFile(join(dir.path, ".pcsync", "journal", `${oldHeld}.lock`), "{}");
    const oldApply = await journal(4, undefined, HEADER + END);
    const oldCut = await journal(5, "heal", `${HEADER}${END.slice(0, 20)}`);
    const middle = await journal(6, "heal", HEADER + END);
    const newest = [await journal(7, "heal", HEADER + END), await journal(8, "heal", HEADER + END)];

    const removed = await pruneHealJournals(dir.path, 2);
    expect(removed.map((path) => path.split("/").pop())).toEqual([oldEnded, middle]);
    const left = (await readdir(join(dir.path, ".pcsync", "journal"))).sort();
    expect(left).toEqual([oldUnended, oldHeld, `${oldHeld}.lock`, oldApply, oldCut, ...newest].sort());
    // 0 keeps all; a missing directory is nothing to prune.
    expect(await pruneHealJournals(dir.path, 0)).toEqual([]);
    expect(await pruneHealJournals(join(dir.path, "nowhere"), 1)).toEqual([]);
  });
});
