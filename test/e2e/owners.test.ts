// E2E: two teams share project 1's plugin_configs, each with its own manifest and `owner:`. Each
// adopts, prunes and converges without touching the other's records or hand-made ones; a config
// that names the other's record is refused (exit 3) until --takeover; the description a user
// writes comes back as written, never with the mark, in plans, exports and saved plans; and
// apply --plan checks the marks again, so a delete added by hand to a saved plan is refused.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { fingerprintRecord, recordKey } from "../../src/plan/fingerprint.js";
import type { Plan } from "../../src/plan/types.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { dataWith } from "../support/emulator-data.js";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { withoutOutcomeLines } from "../support/output-checks.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
});
afterAll(() => work.remove());

const data = () =>
  dataWith([
    { id: 100, project: 1, family: PC, plugin: 3, order: 5, name: "Shared", description: "by hand" },
    { id: 101, project: 1, family: PC, plugin: 4, order: 6, name: "Hand-made" },
    {
      id: 102,
      project: 1,
      family: PC,
      plugin: 6,
      order: 7,
      name: "Forged",
      description: "x [pcsync owner=team-a]",
    },
  ]);

const TEAM_A = manifest(
  "version: 1",
  "owner: team-a",
  "projects:",
  '  "1":',
  "    plugin_configs:",
  "      prune: true",
  "      configs:",
  "        - name: A1", // 8
  "          plugin: 2",
  "          enabled: true",
  '          description: "spaced  out"',
  "          order: 10",
  "        - name: Shared", // 13
  "          plugin: 3",
  "          order: 11",
);

const TEAM_B = (...extra: string[]) =>
  manifest(
    "version: 1",
    "owner: team-b",
    "projects:",
    '  "1":',
    "    plugin_configs:",
    "      prune: true",
    "      configs:",
    "        - name: B1",
    "          plugin: 6",
    "          description: null",
    "          order: 20",
    ...extra,
  );

describe.each<ProfileName>(["seed", "posthog-2024"])("two owners on one family (%s)", (profile) => {
  let server: TestServer;
  let a: string;
  let b: string;
  beforeAll(async () => {
    server = await startServer(profile, { data: data() });
    a = await work.write(`${profile}-a.yaml`, TEAM_A);
    b = await work.write(`${profile}-b.yaml`, TEAM_B());
  });
  afterAll(() => server.close());

  it("plans an adoption, and says what prune leaves alone and why, in text, markdown and JSON", async () => {
    const text = await server.run(["plan", "-f", a, "--detailed-exitcode"]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain(
      `  ~ adopt "Shared" (id 100)  # ${a}:13\n      owner: (no mark) → "team-a"\n`,
    );
    expect(text.stdout).toContain(
      'unmanaged: 5 records left alone by prune (5 with no owner mark; prune deletes only records marked by owner "team-a"):',
    );
    expect(text.stdout).toContain('description: "spaced  out"');
    expect(text.stdout).not.toContain("[pcsync");

    const markdown = await server.run(["plan", "-f", a, "--format", "markdown"]);
    expect(markdown.stdout).toContain('~ adopt "Shared" (id 100)');

    const json = JSON.parse((await server.run(["plan", "-f", a, "--format", "json"])).stdout) as Plan;
    expect(json.owner).toBe("team-a");
    expect(json.changes.find((change) => change.name === "Shared")?.mark).toEqual({
      owner: "team-a",
      from: null,
      keep: "by hand",
    });
    expect(json.families[0]?.pruneKept).toEqual({ unmarked: 5, otherOwners: 0 });
  });

  it("applies each owner's manifest, in turn and again, and each converges without touching the other's", async () => {
    for (const file of [a, b, a, b]) {
      const applied = await server.run(["apply", "-f", file, "--auto-approve"]);
      expect(withoutOutcomeLines(applied.stderr)).toBe("");
      expect(applied.code).toBe(0);
    }
    for (const file of [a, b]) {
      const again = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
      expect(again.stdout).toContain("No changes.");
      expect(again.code).toBe(0);
    }
    const records = await server.list(1, PC);
    const byName = new Map(records.map((record) => [record.name, record]));
    expect(byName.get("A1")?.description).toBe("spaced  out\n\n[pcsync owner=team-a]");
    expect(byName.get("Shared")?.description).toBe("by hand\n\n[pcsync owner=team-a]");
    expect(byName.get("B1")?.description).toBe("[pcsync owner=team-b]");
    // Hand-made records, and one whose text only looks marked, are never pruned.
    expect(byName.get("Hand-made")?.deleted).toBe(false);
    expect(byName.get("Forged")?.description).toBe("x [pcsync owner=team-a]");
  });

  it("exports the descriptions as written, without the mark", async () => {
    const exported = await server.run(["export", "--project", "1"]);
    expect(exported.code).toBe(0);
    // Only the hand-made text that looks like a mark (and is none) keeps its words.
    expect(exported.stdout.split("[pcsync owner=")).toHaveLength(2);
    expect(exported.stdout).toContain("description: x [pcsync owner=team-a]");
    expect(exported.stdout).toContain("description: spaced  out\n");
    expect(exported.stdout).toContain("description: by hand");
  });

  it("refuses a config that names the other owner's record (exit 3, naming it), until --takeover", async () => {
    const greedy = await work.write(
      `${profile}-b2.yaml`,
      TEAM_B("        - name: A1", "          plugin: 2", "          order: 21"),
    );
    for (const args of [["plan"], ["apply", "--auto-approve"]]) {
      const command = args[0];
      const refused = await server.run([...args, "-f", greedy]);
      expect(refused.code, command).toBe(3);
      expect(refused.stderr).toContain(`${greedy}:12: config "A1" matches record`);
      expect(refused.stderr).toContain('which owner "team-a" manages');
      expect(refused.stderr).toContain("--takeover");
    }
    const saved = join(work.path, `${profile}-takeover.json`);
    const planned = await server.run(["plan", "-f", greedy, "--takeover", "-o", saved]);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain('~ take over "A1"');
    expect(planned.stdout).toContain('owner: "team-a" → "team-b"');
    const plan = JSON.parse(await readFile(saved, "utf8")) as Plan;
    expect(plan).toMatchObject({ owner: "team-b", takeover: true });
    expect((await server.run(["apply", "--plan", saved, "--takeover"])).code).toBe(1);
    const applied = await server.run(["apply", "--plan", saved]);
    expect(withoutOutcomeLines(applied.stderr)).toBe("");
    expect(applied.code).toBe(0);
    expect((await server.run(["plan", "-f", greedy, "--detailed-exitcode"])).code).toBe(0);
    // The text under the mark stayed; team A now sees its record gone to team B.
    const a1 = (await server.list(1, PC)).find((record) => record.name === "A1");
    expect(a1?.description).toBe("spaced  out\n\n[pcsync owner=team-b]");
    expect((await server.run(["plan", "-f", a])).code).toBe(3);
  });

  it("refuses a saved plan whose delete was added by hand for a record of another owner", async () => {
    const saved = join(work.path, `${profile}-b.json`);
    expect((await server.run(["plan", "-f", b, "-o", saved])).code).toBe(0);
    const plan = JSON.parse(await readFile(saved, "utf8")) as Plan;
    const shared = (await server.list(1, PC)).find((record) => record.name === "Shared");
    plan.changes.push({
      action: "delete",
      project: "1",
      family: PC,
      name: "Shared",
      id: shared?.id ?? 0,
      fields: {},
      source: `${b}:6`,
    });
    plan.summary.delete += 1;
    // Forged consistently (its fingerprint added, the record no longer listed as left alone), so
    // that the plan's own checks pass and the owner marks are what refuses it.
    if (shared)
      plan.fingerprints[recordKey("1", PC, shared.id)] = fingerprintRecord(shared as PluginConfigRecord);
    for (const family of plan.families) {
      family.unmanaged = family.unmanaged.filter((record) => record.id !== shared?.id);
    }
    await writeFile(saved, JSON.stringify(plan));
    const applied = await server.run(["apply", "--plan", saved]);
    expect(applied.code).toBe(3);
    expect(applied.stderr).toContain(
      `record ${shared?.id} ("Shared") in project 1 plugin_configs: prune deletes only records with the mark of owner "team-b", and it carries the mark of owner "team-a"`,
    );
    expect((await server.list(1, PC)).some((record) => record.name === "Shared")).toBe(true);
  });
});
