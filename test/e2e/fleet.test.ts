// E2E on both profiles: a fleet manifest (templates, a project set, `projects: all`) plans with
// its tracing, applies, and then plans no changes, like the same configs written out.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { exampleData } from "../../src/emulator/index.js";
import { FE, PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { withoutOutcomeLines } from "../support/output-checks.js";
import { openServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

const PROFILES: ProfileName[] = ["seed", "posthog-2024"];

let write: WriteFile;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ write, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

const TEMPLATES = [
  "templates:",
  "  baseline:",
  "    plugin_configs:",
  "      configs:",
  "        - name: GeoIP",
  "          plugin: 1",
  "          enabled: true",
  "        - name: Property Filter",
  "          plugin: 2",
  "          enabled: false",
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - { name: Notification Bar, plugin: 40, enabled: true }",
  "  analytics:",
  "    plugin_configs:",
  "      configs:",
  "        - { name: Taxonomy Standardizer, plugin: 3, enabled: true }",
];

/** Example data with more projects, for `projects: all`. */
function withProjects(ids: readonly number[]) {
  const data = exampleData();
  for (const id of ids) data.projects.push({ id, name: `Project ${id}` });
  return data;
}

describe.concurrent.each(PROFILES)("on %s", (profile) => {
  it("plans with tracing, applies, then plans no changes", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, profile);
    const file = await write(
      `fleet-${profile}.yaml`,
      manifest(
        "version: 1",
        ...TEMPLATES,
        "project_sets:",
        "  - name: web",
        '    projects: ["1", "2", "3"]',
        '    except: ["3"]',
        "    use: [baseline]", // 23
        "    plugin_configs:",
        "      prune: true",
        "projects:",
        '  "1":',
        "    use: [analytics]",
        "    plugin_configs:",
        "      overrides:",
        "        Property Filter: { description: Drops internal properties, enabled: true }",
        "      configs:",
        "        - { name: Customer.io Export, plugin: 4 }",
        '  "3":',
        "    use: [analytics]", // 35
      ),
    );
    const planned = await server.run(["plan", "-f", file]);
    expect(planned.code).toBe(0);
    // The template's line, then where the set (or the project) applied it.
    expect(planned.stdout).toMatch(
      /\+ create "Property Filter" {2}# \S+fleet-[\w-]+\.yaml:9 via \S+fleet-[\w-]+\.yaml:23\n/,
    );
    expect(planned.stdout).toMatch(/\+ create "Taxonomy Standardizer" {2}# \S+:18 via \S+:35\n/);

    const markdown = await server.run(["plan", "-f", file, "--format", "markdown"]);
    expect(markdown.stdout).toMatch(/create "Taxonomy Standardizer" {2}# \S+:18 via \S+:35\n/);

    const json = await server.run(["plan", "-f", file, "--format", "json"]);
    const plan = JSON.parse(json.stdout) as {
      changes: { project: string; name: string; source: string; via?: string }[];
    };
    const taxonomy3 = plan.changes.find(
      (change) => change.project === "3" && change.name === "Taxonomy Standardizer",
    );
    expect(taxonomy3?.via).toMatch(/:35$/);
    const customerIo = plan.changes.find((change) => change.name === "Customer.io Export");
    expect(customerIo?.via).toBeUndefined();

    const applied = await server.run(["apply", "-f", file, "--auto-approve"]);
    expect(withoutOutcomeLines(applied.stderr)).toBe("");
    expect(applied.code).toBe(0);
    const again = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(again.stdout).toContain("No changes.");
    expect(again.code).toBe(0);

    // posthog-2024's plugin_configs list also shows the site apps (plugins 40 and up).
    const project1 = (await server.list(1, PC)).filter((record) => !record.deleted && record.plugin < 40);
    expect(project1.map((record) => record.name).sort()).toEqual(
      ["Customer.io Export", "GeoIP", "Property Filter", "Taxonomy Standardizer"].sort(),
    );
    expect(project1.find((record) => record.name === "Property Filter")?.description).toBe(
      "Drops internal properties",
    );
    // Project 3 is excepted from the set: no baseline, its own template only.
    expect((await server.list(3, PC)).map((record) => record.name)).toContain("Taxonomy Standardizer");
    expect((await server.list(3, FE)).map((record) => record.name)).not.toContain("Notification Bar");
  });

  it("projects: all reads the key's projects, minus except, merging the named ones", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile, {
      data: withProjects([4, 5, 6, 7]),
      // The key sees five of the seven projects: `all` is what it can see.
      key: { scopes: null, projects: [1, 2, 4, 5, 6] },
    });
    const file = await write(
      `all-${profile}.yaml`,
      manifest(
        "version: 1",
        ...TEMPLATES,
        "project_sets:",
        "  - name: everyone",
        "    projects: all",
        '    except: ["2"]',
        "    use: [analytics]",
        "projects:",
        '  "5":',
        "    use: [baseline]",
      ),
    );
    const validated = await server.run(["validate", "-f", file], { env: { PCSYNC_BASE_URL: undefined } });
    expect(validated.code).toBe(0);
    expect(validated.stdout).toContain("says projects: all, resolved at plan time");

    const json = await server.run(["plan", "-f", file, "--format", "json"]);
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as { changes: { project: string; name: string; action: string }[] };
    const creates = plan.changes
      .filter((change) => change.action === "create")
      .map((change) => `${change.project}:${change.name}`)
      .sort();
    expect(creates).toEqual(
      [
        "1:Taxonomy Standardizer",
        "4:Taxonomy Standardizer",
        "5:GeoIP",
        "5:Notification Bar",
        "5:Property Filter",
        "5:Taxonomy Standardizer",
        "6:Taxonomy Standardizer",
      ].sort(),
    );

    // --project may name a project that only `all` brings in.
    const one = await server.run(["plan", "-f", file, "--project", "6", "--format", "json"]);
    expect(one.code).toBe(0);
    expect(
      (JSON.parse(one.stdout) as { changes: { project: string }[] }).changes.map((change) => change.project),
    ).toEqual(["6"]);
    const missing = await server.run(["plan", "-f", file, "--project", "7"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("--project 7: not in the manifest");

    const applied = await server.run(["apply", "-f", file, "--auto-approve"]);
    expect(applied.code).toBe(0);
    const again = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(again.stdout).toContain("No changes.");
    expect(again.code).toBe(0);
  });
});
