// E2E: a saved plan is checked, not trusted. Each hand edit of a real saved plan (a change moved
// to another project's record, a delete appended, fingerprints removed, guards removed, another
// server) is refused with exit 3 and nothing written; the key goes only to a server the user named.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest } from "../support/manifest-text.js";
import { openServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

let dir: string;
let write: WriteFile;
let removeWorkDir: () => Promise<void>;
let manifestFile: string;
let emptyingFile: string;
beforeAll(async () => {
  ({ path: dir, write, remove: removeWorkDir } = await temporaryDirectory());
  // Project 1 pruned (an update, a create, a delete of "Legacy S3"); project 2 not pruned, so its
  // records are listed as unmanaged.
  manifestFile = await write(
    "pcsync.yaml",
    manifest(
      "version: 1",
      "projects:",
      '  "1":',
      "    plugin_configs:",
      "      prune: true",
      "      configs:",
      "        - name: Property Filter",
      "          plugin: 2",
      "          enabled: true",
      "        - name: GeoIP",
      "          plugin: 1",
      "        - name: Taxonomy Standardizer",
      "          plugin: 3",
      '  "2":',
      "    plugin_configs:",
      "      configs:",
      "        - name: Only Here",
      "          plugin: 8",
    ),
  );
  emptyingFile = await write(
    "empty.yaml",
    manifest(
      "version: 1",
      "projects:",
      '  "2":',
      "    plugin_configs:",
      "      prune: true",
      "      configs: []",
    ),
  );
});
afterAll(() => removeWorkDir());

interface SavedChange {
  action: string;
  project: string;
  family: string;
  name: string | null;
  id: number | null;
  fields: Record<string, unknown>;
  source: string;
}
interface SavedPlan {
  server?: string;
  summary: Record<string, number>;
  changes: SavedChange[];
  families: { project: string; family: string; prune: boolean; unmanaged: { id: number; name: string }[] }[];
  fingerprints: Record<string, string>;
  guards: unknown[];
}

async function savePlan(server: TestServer, file: string, name: string): Promise<SavedPlan> {
  const path = join(dir, name);
  const result = await server.run(["plan", "-f", file, "--out", path]);
  expect(result.code).toBe(0);
  return JSON.parse(await readFile(path, "utf8")) as SavedPlan;
}

const changeOf = (plan: SavedPlan, action: string) => {
  const change = plan.changes.find((item) => item.action === action);
  if (!change) throw new Error(`no ${action} in the plan`);
  return change;
};

const EDITS: Array<[string, (plan: SavedPlan) => void, RegExp]> = [
  [
    "an update moved to another project's record",
    (plan) => Object.assign(changeOf(plan, "update"), { project: "2", id: 5 }),
    /carries no fingerprint of record 5 as read in project 2 plugin_configs/,
  ],
  [
    "an update moved to another record, its fingerprint moved with it",
    (plan) => {
      const change = changeOf(plan, "update");
      plan.fingerprints["1/plugin_configs/1"] = plan.fingerprints[`1/plugin_configs/${change.id}`] ?? "";
      change.id = 1;
    },
    /record 1 \("Property Filter"\) in project 1 plugin_configs was changed/,
  ],
  [
    "an update moved to a project the plan never read",
    (plan) => Object.assign(changeOf(plan, "update"), { project: "3", id: 7 }),
    /the plan read no list of project 3 plugin_configs/,
  ],
  [
    "a delete appended for a record the plan lists as unmanaged",
    (plan) => {
      const unmanaged = plan.families.find((family) => family.project === "2")?.unmanaged[0];
      plan.changes.push({ ...changeOf(plan, "delete"), project: "2", id: unmanaged?.id ?? 0, name: "GeoIP" });
      plan.summary.delete = (plan.summary.delete ?? 0) + 1;
    },
    /is listed as unmanaged[\s\S]*project 2 plugin_configs is not pruned in this plan/,
  ],
  [
    "the fingerprints removed",
    (plan) => {
      plan.fingerprints = {};
    },
    /carries no fingerprint of record 3/,
  ],
  [
    "a create added twice",
    (plan) => {
      plan.changes.push({ ...changeOf(plan, "create") });
      plan.summary.create = (plan.summary.create ?? 0) + 1;
    },
    /another create or rename in the plan gives a record this name/,
  ],
  [
    "a create that sends another name than its own (two creates of one name, past the check above)",
    (plan) => {
      changeOf(plan, "create").fields.name = { to: "GeoIP" };
    },
    /the name it sends \(fields.name.to\) is not its name \(name\)/,
  ],
  [
    "an update turned into a rename to the name a create makes (two records of one name)",
    (plan) => {
      const create = changeOf(plan, "create");
      const update = changeOf(plan, "update");
      update.name = create.name;
      update.fields.name = { from: "Property Filter", to: create.name };
    },
    /another create or rename in the plan gives a record this name/,
  ],
  [
    "a rename whose name is not the one it sends",
    (plan) => {
      changeOf(plan, "update").fields.name = { from: "Property Filter", to: "Something Else" };
    },
    /the name it sends \(fields.name.to\) is not its name \(name\)/,
  ],
  [
    "a name the service would trim",
    (plan) => {
      const create = changeOf(plan, "create");
      create.name = "Taxonomy Standardizer ";
      create.fields.name = { to: "Taxonomy Standardizer " };
    },
    /name ends with white space \(U\+0020\)/,
  ],
];

describe.concurrent("a saved plan edited by hand", () => {
  it.for(EDITS.map((edit, index) => [...edit, index] as const))(
    "is refused (exit 3) with %s, and nothing is written",
    async ([, edit, expected, index], { onTestFinished }) => {
      const server = await openServer(onTestFinished, "seed");
      const plan = await savePlan(server, manifestFile, `edit-${index}.json`);
      edit(plan);
      const path = join(dir, `edited-${index}.json`);
      await writeFile(path, JSON.stringify(plan));
      const before = server.emulator.snapshot().records;
      const result = await server.run(["apply", "--plan", path, "--force"]);
      expect(result.stderr).toMatch(expected);
      expect(result.stderr).toContain("Nothing was changed.");
      expect(result.code).toBe(3);
      expect(server.emulator.snapshot().records).toEqual(before);
    },
  );

  it("has its guards computed again: a plan emptying a family with its guards removed is refused without --force", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const plan = await savePlan(server, emptyingFile, "guarded.json");
    expect(plan.guards).toHaveLength(1);
    plan.guards = [];
    const path = join(dir, "unguarded.json");
    await writeFile(path, JSON.stringify(plan));
    const refused = await server.run(["apply", "--plan", path]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("prune would delete the only record and leave the family empty");
    expect(server.emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);
    const forced = await server.run(["apply", "--plan", path, "--force"]);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain(
      "--force overrides: project 2 plugin_configs: prune would delete the only record",
    );
    expect(forced.stderr).not.toContain("Use --force");
  });

  it("made against another server is refused (exit 3, naming both); with no server named, nothing is sent anywhere", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const elsewhere = await openServer(onTestFinished, "seed");
    const plan = await savePlan(server, manifestFile, "moved.json");
    plan.server = elsewhere.emulator.url;
    const path = join(dir, "moved-server.json");
    await writeFile(path, JSON.stringify(plan));

    const refused = await server.run(["apply", "--plan", path]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `was made against ${elsewhere.emulator.url}, not ${server.emulator.url}`,
    );

    const unnamed = await server.run(["apply", "--plan", path], { env: { PCSYNC_BASE_URL: undefined } });
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain("the API key is never sent to a server read from a plan file");
    expect(elsewhere.emulator.requestLog).toEqual([]);
    expect(server.emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);

    delete plan.server;
    await writeFile(path, JSON.stringify(plan));
    const serverless = await server.run(["apply", "--plan", path]);
    expect(serverless.code).toBe(3);
    expect(serverless.stderr).toContain("it names no server it was made against");
  });
});
