// E2E: the rollback of an owner's run undoes the run's writes and nothing more. A record another
// owner marked since (or in a race with the run) is not written without --force, and then keeps
// that owner's mark; a field the run never sent is left as someone else made it.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { readMark } from "../../src/owner-mark.js";
import { dataWith } from "../support/emulator-data.js";
import { PC } from "../support/families.js";
import { ownerManifest } from "../support/manifest-text.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const TEAM_B = ownerManifest(
  "team-b",
  ["        - name: Old Export", "          plugin: 3", "          deleted: true"],
  ["        - name: Meter", "          plugin: 4", "          enabled: false"],
);

describe.each<ProfileName>(["seed", "posthog-2024"])("rollback of an owner's run (%s)", (profile) => {
  let server: TestServer;
  let work: WorkDir;
  const start = async () => {
    server = await startServer(profile, {
      data: dataWith([
        { id: 100, project: 1, family: PC, plugin: 3, order: 5, name: "Old Export", enabled: true },
        { id: 101, project: 1, family: PC, plugin: 4, order: 6, name: "Meter", enabled: true },
      ]),
    });
    work = await temporaryDirectory();
    cleanup.push(
      () => server.close(),
      () => work.remove(),
    );
  };
  const record = async (id: number) =>
    (await server.call("GET", `/api/projects/1/plugin_configs/${id}/`)).body as {
      description: string | null;
      enabled: boolean;
      deleted: boolean;
    };

  it("leaves a record another owner marked since its run, unless forced, and then keeps that mark", async () => {
    await start();
    const b = await work.write("b.yaml", TEAM_B);
    const journal = join(work.path, "b.jsonl");
    const applied = await server.run(["apply", "-f", b, "--auto-approve", "--journal", journal]);
    expect(applied.code, applied.stderr).toBe(0);
    const header = JSON.parse((await readFile(journal, "utf8")).split("\n")[0] ?? "") as { owner?: string };
    expect(header.owner).toBe("team-b");
    // Team A's tooling marks the deleted record as its own.
    expect(
      (
        await server.call("PATCH", "/api/projects/1/plugin_configs/100/", {
          description: "[pcsync owner=team-a]",
        })
      ).status,
    ).toBe(200);

    const refused = await server.run(["rollback", "--journal", journal, "--auto-approve"]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `record 100 ("Old Export") in project 1 plugin_configs carries owner "team-a"'s mark now, not the run's owner "team-b": it is that owner's record`,
    );
    expect(await record(100)).toMatchObject({ deleted: true, description: "[pcsync owner=team-a]" });

    const forced = await server.run(["rollback", "--journal", journal, "--auto-approve", "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(await record(100)).toMatchObject({
      deleted: false,
      enabled: true,
      description: "[pcsync owner=team-a]",
    });
    expect(await record(101)).toMatchObject({ enabled: true });
  });

  it("undoes a --takeover, and undoes that undo, each run's own mark written back", async () => {
    await start();
    const meter = ["        - name: Meter", "          plugin: 4"];
    const teamA = await work.write("a.yaml", ownerManifest("team-a", meter));
    expect((await server.run(["apply", "-f", teamA, "--auto-approve"])).code).toBe(0);
    const teamB = await work.write(
      "b2.yaml",
      ownerManifest("team-b", [...meter, "          enabled: false"]),
    );
    const journal = join(work.path, "takeover.jsonl");
    const taken = await server.run([
      "apply",
      "-f",
      teamB,
      "--auto-approve",
      "--takeover",
      "--journal",
      journal,
    ]);
    expect(taken.code, taken.stderr).toBe(0);
    const ownerOf = async () => readMark((await record(101)).description).owner;
    expect(await record(101)).toMatchObject({ enabled: false });
    expect(await ownerOf()).toBe("team-b");

    const undone = await server.run(["rollback", "--journal", journal, "--auto-approve"], { cwd: work.path });
    expect(undone.code, undone.stderr).toBe(0);
    expect(await record(101)).toMatchObject({ enabled: true });
    expect(await ownerOf()).toBe("team-a");

    // The rollback's own journal names team-b, and carries the mark it gave back to team-a.
    const undo = /Journal: (\S+)/.exec(`${undone.stdout}${undone.stderr}`)?.[1] ?? "";
    expect(undo).toMatch(/\.jsonl$/);
    const redone = await server.run(["rollback", "--journal", undo, "--auto-approve"], { cwd: work.path });
    expect(redone.code, redone.stderr).toBe(0);
    expect(await record(101)).toMatchObject({ enabled: false });
    expect(await ownerOf()).toBe("team-b");
  });
});
