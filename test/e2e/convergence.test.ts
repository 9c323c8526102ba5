// E2E on both profiles: apply then plan is empty (also under faults), overlap, deletes, partial applies.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { dataWith } from "../support/emulator-data.js";
import { FE, PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { hasStackTrace, withoutOutcomeLines } from "../support/output-checks.js";
import { EXAMPLES } from "../support/paths.js";
import { openServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

const PROFILES: ProfileName[] = ["seed", "posthog-2024"];

let write: WriteFile;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ write, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

// Project 1 gets a crowded plugin_configs (enabled and disabled records, one unnamed) so that a
// reversed explicit order, renames and prunes all have something to do.
const crowded = () =>
  dataWith([
    { id: 20, project: 1, family: PC, plugin: 6, order: 4, name: "BigQuery Export", enabled: false },
    { id: 21, project: 1, family: PC, plugin: 7, order: 5, name: "First Time Event Tracker" },
    { id: 22, project: 1, family: PC, plugin: 8, order: 6, name: null },
    { id: 23, project: 1, family: PC, plugin: 4, order: 7, name: "Customer.io Export" },
    { id: 24, project: 1, family: FE, plugin: 41, order: 2, name: "Pineapple Mode" },
  ]);

const reorderAndPrune = () =>
  write(
    "reorder-and-prune.yaml",
    manifest(
      "version: 1",
      "projects:",
      '  "1":',
      "    plugin_configs:",
      "      prune: true",
      "      configs:",
      "        - { name: Customer.io Export, plugin: 4, enabled: false, order: 1 }",
      "        - { name: Tracker, id: 21, plugin: 7, order: 2 }",
      "        - { name: BigQuery Export, plugin: 6, enabled: true, order: 3 }",
      "        - { name: Property Filter, plugin: 2, enabled: true, order: 5 }",
      "        - { name: GeoIP, plugin: 1, description: Country and city, order: 8 }",
      "        - { name: Taxonomy Standardizer, plugin: 3, enabled: true, order: 9 }",
      "    pipeline_frontend_apps_configs:",
      "      configs:",
      "        - { name: Pineapple Mode, plugin: 41 }",
      "        - { name: Notification Bar, plugin: 40, enabled: false }",
    ),
  );

async function expectConverged(target: TestServer, files: string[], extra: string[] = []): Promise<void> {
  const args = files.flatMap((file) => ["-f", file]);
  const again = await target.run(["plan", ...args, ...extra, "--detailed-exitcode"]);
  expect(again.stdout).toContain("No changes.");
  expect(again.code).toBe(0);
}

describe.concurrent.each(PROFILES)("on %s", (profile) => {
  it("apply examples/, then plan shows no changes", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, profile);
    const applied = await server.run(["apply", "--auto-approve", "-f", EXAMPLES]);
    expect(withoutOutcomeLines(applied.stderr)).toBe("");
    expect(applied.code).toBe(0);
    await expectConverged(server, [EXAMPLES]);
  });

  it("applies reorders, renames by id and prunes (deletes leave the list), then plan shows no changes", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, { data: crowded() });
    const file = await reorderAndPrune();
    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/Apply complete: 1 created, 6 updated, 2 deleted, 7 reordered\./);
    await expectConverged(server, [file]);
    const names = (await server.list(1, PC))
      .filter((record) => record.plugin < 40)
      .map((record) => [record.name, record.order]);
    expect(names).toEqual([
      ["Customer.io Export", 1],
      ["Tracker", 2],
      ["BigQuery Export", 3],
      ["Property Filter", 5],
      ["GeoIP", 8],
      ["Taxonomy Standardizer", 9],
    ]);
    // The pruned records left the list: deleted by PATCH deleted:true, as DELETE only disables
    // on posthog-2024.
    const ids = (await server.list(1, PC)).map((record) => record.id);
    expect(ids).not.toContain(3);
    expect(ids).not.toContain(22);
    const legacy = await server.call("GET", "/api/projects/1/plugin_configs/3/");
    expect(legacy.body).toMatchObject({ deleted: true, enabled: false });
    expect(server.emulator.requestLog.filter((entry) => entry.method === "DELETE")).toEqual([]);
  });

  // Small on purpose: random 429s make the client pace itself (as it must against real throttling),
  // so a big apply under faults takes many seconds. The seeds are ones whose faults the client's
  // retries absorb; should an interleaving still exhaust them, apply must say so (exit 1) and the
  // next apply must finish the job, which is what a user would do.
  it("converges through injected 503s, 429s and dropped writes, creating nothing twice", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, {
      faults: { fail503Rate: 0.2, fail429Rate: 0.1, dropWriteRate: 0.1, seed: profile === "seed" ? 7 : 11 },
    });
    const scope = ["-f", EXAMPLES, "--project", "1"];
    let applied = await server.run(["apply", "--auto-approve", ...scope]);
    for (let attempt = 1; applied.code === 1 && attempt < 3; attempt++) {
      expect(applied.stderr).toMatch(/^pcsync: (apply incomplete|\d{3} |.*connection)/m);
      expect(hasStackTrace(applied.stderr)).toBe(false);
      applied = await server.run(["apply", "--auto-approve", ...scope]);
    }
    expect(withoutOutcomeLines(applied.stderr)).toBe("");
    expect(applied.code).toBe(0);
    expect(server.emulator.requestLog.some((entry) => entry.status !== 200 && entry.status !== 201)).toBe(
      true,
    );
    server.emulator.setFaults({});
    await expectConverged(server, [EXAMPLES], ["--project", "1"]);
    for (const family of [PC, FE]) {
      const names = (await server.list(1, family)).map((record) => record.name);
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it("a failed create fails only itself: the rest is done, the reorder skipped, the next apply finishes", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, { data: crowded() });
    const broken = (plugin: number) =>
      write(
        `partial-${plugin}.yaml`,
        manifest(
          "version: 1",
          "projects:",
          '  "1":',
          "    plugin_configs:",
          "      prune: true",
          "      configs:",
          "        - { name: GeoIP, plugin: 1, enabled: false }",
          `        - { name: Session Recorder, plugin: ${plugin}, enabled: true }`,
          "        - { name: Property Filter, plugin: 2, enabled: true }",
          "        - { name: BigQuery Export, plugin: 6 }",
          "        - { name: First Time Event Tracker, plugin: 7 }",
          "        - { name: Customer.io Export, plugin: 4 }",
          "    pipeline_frontend_apps_configs:",
          "      configs:",
          "        - { name: Pineapple Mode, plugin: 41, description: Fruit }",
        ),
      );
    const file = await broken(999);
    const first = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain(
      `✗ failed: create "Session Recorder" in project 1 plugin_configs (${file}:8): 400 POST /api/projects/1/plugin_configs/: plugin: Invalid pk "999" - object does not exist.`,
    );
    expect(first.stdout).toMatch(
      new RegExp(
        `… skipped: reorder in project 1 plugin_configs \\(${file}:4\\): 1 create in this family failed`,
      ),
    );
    expect(first.stdout).toContain(
      "Apply incomplete: 0 created, 3 updated, 2 deleted, 1 reordered; 1 failed, 1 skipped.",
    );
    expect(first.stderr).toContain("pcsync: apply incomplete: 1 failed, 1 skipped, 6 done.");
    const done = first.stdout.split("\n").filter((line) => line.startsWith("✓ done: "));
    expect(done.sort()).toEqual(
      [
        `✓ done: update "GeoIP" (id 1) in project 1 plugin_configs (${file}:7)`,
        `✓ done: update "Property Filter" (id 2) in project 1 plugin_configs (${file}:9)`,
        `✓ done: update "Pineapple Mode" (id 24) in project 1 pipeline_frontend_apps_configs (${file}:15)`,
        `✓ done: delete "Legacy S3" (id 3) in project 1 plugin_configs (${file}:4)`,
        // posthog-2024 shows the plugin's name where the record has none.
        `✓ done: delete ${profile === "seed" ? "(unnamed)" : '"Unduplicator"'} (id 22) in project 1 plugin_configs (${file}:4)`,
        `✓ done: reorder in project 1 pipeline_frontend_apps_configs (${file}:13)`,
      ].sort(),
    );
    // What was reported done is done.
    const afterFirst = await server.list(1, PC);
    expect(afterFirst.find((record) => record.name === "GeoIP")?.enabled).toBe(false);
    expect(afterFirst.find((record) => record.name === "Property Filter")?.enabled).toBe(true);
    expect(afterFirst.map((record) => record.id)).not.toContain(3);
    expect(afterFirst.map((record) => record.name)).not.toContain("Session Recorder");
    expect((await server.list(1, FE)).find((record) => record.name === "Pineapple Mode")?.description).toBe(
      "Fruit",
    );

    const fixed = await broken(5);
    const second = await server.run(["apply", "--auto-approve", "-f", fixed]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Apply complete: 1 created, 0 updated, 0 deleted, 2 reordered.");
    await expectConverged(server, [fixed]);
  });
});

describe.concurrent.each(PROFILES)("unmanaged records on %s", (profile) => {
  it("a reorder never moves an unmanaged record, not even one of the same plugin", async ({
    onTestFinished,
  }) => {
    // posthog-2024's rearrange is keyed by plugin id: "GeoIP EU" shares GeoIP's plugin.
    const server = await openServer(onTestFinished, profile, {
      data: dataWith([{ id: 40, project: 1, family: PC, plugin: 1, order: 5, name: "GeoIP EU" }]),
    });
    const file = await write(
      `unmanaged-${profile}.yaml`,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: Property Filter, plugin: 2 }",
        "        - { name: GeoIP, plugin: 1 }",
      ),
    );
    const unmanagedBefore = await Promise.all(
      [3, 40].map(async (id) => (await server.call("GET", `/api/projects/1/plugin_configs/${id}/`)).body),
    );
    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('"Legacy S3" (id 3), "GeoIP EU" (id 40)');
    const unmanagedAfter = await Promise.all(
      [3, 40].map(async (id) => (await server.call("GET", `/api/projects/1/plugin_configs/${id}/`)).body),
    );
    expect(unmanagedAfter).toEqual(unmanagedBefore);
    const ordered = (await server.list(1, PC)).filter((record) => record.plugin < 40);
    expect(ordered.map((record) => [record.id, record.order])).toEqual([
      [2, 1],
      [1, 2],
      [3, 3],
      [40, 5],
    ]);
    await expectConverged(server, [file]);
  });
});

describe.concurrent("reorders by rearrange where the server allows it", () => {
  // Config ids 100+ cannot be mistaken for plugin ids, so apply may try rearrange first.
  const shuffled = () =>
    dataWith([
      { id: 100, project: 3, family: PC, plugin: 1, order: 1, name: "A" },
      { id: 101, project: 3, family: PC, plugin: 2, order: 2, name: "B" },
      { id: 102, project: 3, family: PC, plugin: 3, order: 3, name: "C", enabled: false },
    ]);
  const reversed = () =>
    write(
      "reversed.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "3":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: C, plugin: 3 }",
        "        - { name: B, plugin: 2 }",
        "        - { name: A, plugin: 1 }",
      ),
    );

  interface RearrangeCase {
    profile: ProfileName;
    scopes: string[] | null;
    /** What the one rearrange apply tries first answers. */
    status: number;
    /** Whether rearrange alone moved the records, or PATCH order had to follow. */
    method: string;
  }
  it.for<[string, RearrangeCase]>([
    [
      "seed: rearrange by config id",
      { profile: "seed", scopes: null, status: 200, method: "2 reordered by rearrange" },
    ],
    [
      "posthog-2024, scoped key: rearrange refused (403)",
      {
        profile: "posthog-2024",
        scopes: ["plugin:read", "plugin:write"],
        status: 403,
        method: "2 reordered by PATCH order per record (rearrange refused: 403)",
      },
    ],
    [
      "posthog-2024, unscoped key: rearrange reads the ids as plugin ids",
      {
        profile: "posthog-2024",
        scopes: null,
        status: 200,
        method: "2 reordered by rearrange, then PATCH order for the records it did not move",
      },
    ],
  ])("reorders converge (%s)", async ([, { profile, scopes, status, method }], { onTestFinished }) => {
    const server = await openServer(onTestFinished, profile, {
      data: shuffled(),
      key: { scopes, projects: "*" },
    });
    const file = await reversed();
    const applied = await server.run(["apply", "--auto-approve", "-f", file, "--format", "json"]);
    expect(applied.code).toBe(0);
    const { result } = JSON.parse(applied.stdout) as {
      result: { outcomes: { action: string; message?: string }[] };
    };
    expect(result.outcomes.find((outcome) => outcome.action === "reorder")?.message).toBe(method);
    const rearranges = server.emulator.requestLog.filter((entry) => entry.path.includes("rearrange"));
    expect(rearranges.map((entry) => entry.status)).toEqual([status]);
    expect((await server.list(3, PC)).map((record) => [record.name, record.order])).toEqual([
      ["C", 1],
      ["B", 2],
      ["A", 3],
    ]);
    await expectConverged(server, [file]);
  });
});

describe.concurrent("posthog-2024: plugin_configs also lists the frontend apps", () => {
  it("pruning plugin_configs keeps the records the manifest keeps as frontend apps", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "posthog-2024", { data: crowded() });
    const file = await write(
      "overlap.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
        "    pipeline_frontend_apps_configs:",
        "      configs:",
        "        - { name: Notification Bar, plugin: 40 }",
      ),
    );
    const plan = await server.run(["plan", "-f", file, "--format", "json"]);
    const deleted = (JSON.parse(plan.stdout) as { changes: { action: string; name: string }[] }).changes
      .filter((change) => change.action === "delete")
      .map((change) => change.name);
    expect(deleted.sort()).toEqual(
      [
        "BigQuery Export",
        "Customer.io Export",
        "First Time Event Tracker",
        "Legacy S3",
        "Property Filter",
        "Unduplicator",
      ].sort(),
    );

    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(0);
    expect((await server.list(1, FE)).map((record) => [record.name, record.enabled])).toEqual([
      ["Notification Bar", true],
      ["Pineapple Mode", true],
    ]);
    expect((await server.list(1, PC)).map((record) => record.name).sort()).toEqual([
      "GeoIP",
      "Notification Bar",
      "Pineapple Mode",
    ]);
    await expectConverged(server, [file]);
  });

  it("pruning the frontend family takes the record out of both lists", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "posthog-2024", { data: crowded() });
    const file = await write(
      "prune-frontend.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    pipeline_frontend_apps_configs:",
        "      prune: true",
        "      configs:",
        "        - { name: Notification Bar, plugin: 40 }",
      ),
    );
    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('- delete "Pineapple Mode" (id 24)');
    expect((await server.list(1, FE)).map((record) => record.id)).toEqual([4]);
    expect((await server.list(1, PC)).map((record) => record.id)).not.toContain(24);
    await expectConverged(server, [file]);
  });

  it("a config's plugin cannot change there: apply says so and how to switch plugins", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "posthog-2024");
    const file = await write(
      "switch-plugin.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 8 }",
      ),
    );
    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain(
      `✗ failed: update "GeoIP" (id 5) in project 2 plugin_configs (${file}:6): the server accepted the write but did not apply it: plugin is 1, not 8.`,
    );
    expect(applied.stdout).toContain("give the config a new name");
    expect((await server.list(2, PC)).map((record) => record.plugin)).toEqual([1]);
  });

  it("pruning plugin_configs of a manifest without frontend apps leaves them alone", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "posthog-2024");
    const file = await write(
      "no-frontend.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
        "        - { name: Property Filter, plugin: 2 }",
      ),
    );
    const applied = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('- delete "Legacy S3" (id 3)');
    expect(applied.stdout).not.toContain("Notification Bar");
    expect((await server.list(1, FE)).map((record) => [record.id, record.enabled])).toEqual([[4, true]]);
    await expectConverged(server, [file]);
  });
});
