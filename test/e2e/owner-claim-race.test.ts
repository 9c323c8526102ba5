// E2E: two owners adopt one unmarked record at the same moment (two CLI applies of different
// `owner:` manifests against one emulator). The service has no conditional write, so the last
// write wins; pcsync must say so: exactly one apply exits 0, the other exits 3 naming the winner,
// and the record carries the winner's mark.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readMark } from "../../src/owner-mark.js";
import { spawnCli } from "../support/cli.js";
import { ownerManifest } from "../support/manifest-text.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

let directory: string;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: directory, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

const ROUNDS = 3;

describe.concurrent.each(["seed", "posthog-2024"] as const)(
  "two owners adopt one record at once (%s)",
  (profile) => {
    it(`ends with exactly one owner, the other refused naming it (${ROUNDS} rounds)`, {
      timeout: 120_000,
    }, async ({ onTestFinished }) => {
      const server = await openServer(onTestFinished, profile);
      const files: Record<string, string> = {};
      for (const owner of ["team-a", "team-b"]) {
        files[owner] = join(directory, `${profile}-${owner}.yaml`);
        await writeFile(
          files[owner],
          ownerManifest(owner, [
            "        - name: GeoIP",
            "          plugin: 1",
            "          enabled: true",
            `          description: ${owner} runs it`,
          ]),
        );
      }
      for (let round = 1; round <= ROUNDS; round++) {
        // The record unmarked again, as nobody's.
        await server.call("PATCH", "/api/projects/1/plugin_configs/1/", { description: "" });
        const runs = await Promise.all(
          Object.entries(files).map(async ([owner, file]) => ({
            owner,
            run: await spawnCli(["apply", "-f", file, "--auto-approve", "--no-journal"], {
              env: server.env,
              cwd: directory,
              timeoutMs: 60_000,
            }).done,
          })),
        );
        const record = (await server.list(1, "plugin_configs")).find((item) => item.id === 1);
        const winner = readMark(record?.description ?? null).owner;
        const shown = runs
          .map(({ owner, run }) => `${owner}: ${run.code}\n${run.stdout}${run.stderr}`)
          .join("\n---\n");
        expect(winner, shown).not.toBeNull();
        const won = runs.filter(({ run }) => run.code === 0);
        const lost = runs.filter(({ run }) => run.code === 3);
        expect(
          won.map(({ owner }) => owner),
          `round ${round}:\n${shown}`,
        ).toEqual([winner]);
        expect(lost, `round ${round}:\n${shown}`).toHaveLength(1);
        expect(lost[0]?.run.stderr).toContain(`owner "${winner}"`);
      }
    });
  },
);
