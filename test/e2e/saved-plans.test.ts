// E2E: `plan --out` then `apply --plan`, and the refusal (exit 3) of a plan the world moved away from.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { expectNoSecret, withoutOutcomeLines } from "../support/output-checks.js";
import { EXAMPLES, REPOSITORY } from "../support/paths.js";
import { API_KEY, openServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

let dir: string;
let write: WriteFile;
let removeWorkDir: () => Promise<void>;
let validatePlan: (data: unknown) => boolean;
let manifestFile: string;
beforeAll(async () => {
  ({ path: dir, write, remove: removeWorkDir } = await temporaryDirectory());
  const schema = JSON.parse(await readFile(join(REPOSITORY, "schemas/plan.schema.json"), "utf8")) as object;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const compiled = ajv.compile(schema);
  validatePlan = (data) => {
    const valid = compiled(data);
    if (!valid) throw new Error(`plan does not match the schema: ${ajv.errorsText(compiled.errors)}`);
    return valid;
  };
  // Creates "Taxonomy Standardizer", updates "Property Filter", prunes "Legacy S3", reorders.
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
      "          enabled: true",
    ),
  );
});
afterAll(() => removeWorkDir());

async function savePlan(server: TestServer, name: string): Promise<{ path: string; text: string }> {
  const path = join(dir, name);
  const result = await server.run(["plan", "-f", manifestFile, "--out", path]);
  expect(result.stderr).toContain(`Saved the plan to ${path}`);
  expect(result.code).toBe(0);
  expect(result.stderr).toContain(`Saved the plan to ${path}`);
  return { path, text: await readFile(path, "utf8") };
}

describe.concurrent("saved plans", () => {
  it("plan --out writes a schema-valid JSON plan without the API key; apply --plan carries it out", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path, text } = await savePlan(server, "plan.json");
    expect(text).not.toContain(API_KEY);
    const plan = JSON.parse(text) as {
      summary: Record<string, number>;
      changes: { action: string; name: string; source: string; fields: Record<string, unknown> }[];
    };
    expect(validatePlan(plan)).toBe(true);
    expect(plan.summary).toEqual({ create: 1, update: 1, delete: 1, reorder: 2 });
    expect(plan.changes).toContainEqual(
      expect.objectContaining({
        action: "update",
        name: "Property Filter",
        source: `${manifestFile}:7`,
        fields: { enabled: { from: false, to: true } },
      }),
    );
    // Applying the saved plan needs no manifest at all.
    const applied = await server.run(["apply", "--plan", path], { cwd: dir });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("Apply complete: 1 created, 1 updated, 1 deleted, 2 reordered.");
    expectNoSecret(applied, API_KEY);
    expect((await server.list(1, PC)).map((record) => [record.name, record.order])).toEqual([
      ["Property Filter", 1],
      ["GeoIP", 2],
      ["Taxonomy Standardizer", 3],
    ]);
    const again = await server.run(["plan", "-f", manifestFile, "--detailed-exitcode"]);
    expect(again.code).toBe(0);
  });

  it("refuses (exit 3) when a record the plan touches was changed since, naming it, and changes nothing", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "changed.json");
    const patched = await server.call("PATCH", "/api/projects/1/plugin_configs/2/", {
      description: "hand-edited",
    });
    expect(patched.status).toBe(200);
    const before = server.emulator.snapshot().records;
    server.emulator.resetRequestLog();

    const result = await server.run(["apply", "--plan", path]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`the saved plan ${path} is stale`);
    expect(result.stderr).toContain('record 2 ("Property Filter") in project 1 plugin_configs was changed');
    expect(result.stderr).toContain("Nothing was changed.");
    expect(server.emulator.snapshot().records).toEqual(before);
    expect(server.emulator.requestLog.every((entry) => entry.method === "GET")).toBe(true);
  });

  it("refuses a plan whose create was made by someone else in the meantime", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "created.json");
    const created = await server.call("POST", "/api/projects/1/plugin_configs/", {
      name: "Taxonomy Standardizer",
      plugin: 3,
      order: 7,
    });
    expect(created.status).toBe(201);
    const result = await server.run(["apply", "--plan", path]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /a record named "Taxonomy Standardizer" \(id \d+\) now exists in project 1 plugin_configs/,
    );
    expect(
      (await server.list(1, PC)).filter((record) => record.name === "Taxonomy Standardizer"),
    ).toHaveLength(1);
  });

  it("refuses a plan when a record was added to a family it prunes", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "membership.json");
    const created = await server.call("POST", "/api/projects/1/plugin_configs/", {
      name: "Newcomer",
      plugin: 8,
      order: 9,
    });
    expect(created.status).toBe(201);
    const result = await server.run(["apply", "--plan", path]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("the set of records in project 1 plugin_configs changed");
  });

  it.for(["seed", "posthog-2024"] as const)(
    "applies a plan that prunes plugin_configs after a frontend app was made in the project (%s; posthog-2024 lists it there too), and still refuses one after a plugin config was",
    async (profile, { onTestFinished }) => {
      const made = async (family: string, name: string, plugin: number) => {
        const server = await openServer(onTestFinished, profile);
        const { path } = await savePlan(server, `${name}-made-${profile}.json`);
        const created = await server.call("POST", `/api/projects/1/${family}/`, { name, plugin, order: 9 });
        expect(created.status).toBe(201);
        return { server, applied: await server.run(["apply", "--plan", path]) };
      };
      const app = await made("pipeline_frontend_apps_configs", "Banner", 40);
      expect(app.applied.code, app.applied.stderr).toBe(0);
      expect(
        (await app.server.list(1, "pipeline_frontend_apps_configs")).map((record) => record.name),
      ).toContain("Banner");
      expect((await app.server.run(["plan", "-f", manifestFile, "--detailed-exitcode"])).code).toBe(0);

      const config = await made("plugin_configs", "Newcomer", 8);
      expect(config.applied.code).toBe(3);
      expect(config.applied.stderr).toContain("the set of records in project 1 plugin_configs changed");
    },
  );

  it("refuses a plan when a record it deletes is already gone", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "gone.json");
    expect((await server.call("PATCH", "/api/projects/1/plugin_configs/3/", { deleted: true })).status).toBe(
      200,
    );
    const result = await server.run(["apply", "--plan", path]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('record 3 ("Legacy S3") in project 1 plugin_configs is gone');
  });

  it("refuses (exit 3) a plan made against another server", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "elsewhere.json");
    const other = await openServer(onTestFinished, "seed");
    const result = await other.run(["apply", "--plan", path]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`was made against ${server.emulator.url}`);
    expect(other.emulator.requestLog).toEqual([]);
  });

  it("applies a saved plan that trips a safety guard only with --force", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const empty = await write(
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
    const path = join(dir, "guarded.json");
    expect((await server.run(["plan", "-f", empty, "--out", path])).code).toBe(0);
    const refused = await server.run(["apply", "--plan", path]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("prune would delete the only record");
    const forced = await server.run(["apply", "--plan", path, "--force"]);
    expect(forced.code).toBe(0);
    expect(await server.list(2, PC)).toEqual([]);
  });

  it("apply --plan never sends the key to the plan's server: without --base-url or PCSYNC_BASE_URL it asks for one", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const withServer = await write(
      "with-server.yaml",
      (await readFile(manifestFile, "utf8")).replace(
        "version: 1\n",
        `version: 1\nserver:\n  base_url: ${server.emulator.url}\n`,
      ),
    );
    const path = join(dir, "with-server.json");
    const noUrl = { PCSYNC_BASE_URL: undefined };
    expect((await server.run(["plan", "-f", withServer, "--out", path], { env: noUrl })).code).toBe(0);
    server.emulator.resetRequestLog();
    const refused = await server.run(["apply", "--plan", path], { env: noUrl });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`name the server it was made against (${server.emulator.url})`);
    expect(server.emulator.requestLog).toEqual([]);
    const applied = await server.run(["apply", "--plan", path, "--base-url", server.emulator.url], {
      env: noUrl,
    });
    expect(withoutOutcomeLines(applied.stderr)).toBe("");
    expect(applied.code).toBe(0);
    expect((await server.run(["plan", "-f", withServer, "--detailed-exitcode"], { env: noUrl })).code).toBe(
      0,
    );
  });

  it("a damaged or missing plan file is an error (exit 1) that says how to get a good one", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const damaged = await write("damaged.json", '{"format": "pcsync-plan", "version": 1, "changes": [');
    const result = await server.run(["apply", "--plan", damaged]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${damaged} is not a pcsync plan: it is not valid JSON`);
    expect(result.stderr).toContain("pcsync plan");
    const missing = await server.run(["apply", "--plan", join(dir, "missing.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`cannot read the plan file ${join(dir, "missing.json")}`);
    expect(server.emulator.requestLog).toEqual([]);
  });

  it("apply --plan refuses manifest and scope options it would otherwise ignore", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const { path } = await savePlan(server, "scoped.json");
    for (const extra of [
      ["-f", EXAMPLES],
      ["--project", "1"],
      ["--family", PC],
      ["--shard", "1/2"],
    ]) {
      const result = await server.run(["apply", "--plan", path, ...extra]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("--plan");
      expect(result.stderr).toContain(extra[0]);
    }
    expect(server.emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);
  });
});

describe.concurrent.each(["seed", "posthog-2024"] as const)(
  "a saved plan's deletes that `deleted: true` asks for, on %s",
  (profile) => {
    it("are carried out in a family without prune, counted by no delete guard, and an owner deletes an unmarked record as its plan did", async ({
      onTestFinished,
    }) => {
      const server = await openServer(onTestFinished, profile);
      const { path: here, write: writeHere, remove } = await temporaryDirectory();
      onTestFinished(remove);
      // Project 2's only plugin config goes: a prune of all of a family would trip the delete guard,
      // but a delete asked for by name is not a prune.
      const deletes = await writeHere(
        "deletes.yaml",
        manifest(
          "version: 1",
          "projects:",
          '  "1":',
          "    plugin_configs:",
          "      configs:",
          "        - { name: GeoIP, plugin: 1, deleted: true }",
          '  "2":',
          "    plugin_configs:",
          "      configs:",
          "        - { name: GeoIP, plugin: 1, deleted: true }",
        ),
      );
      const owned = await writeHere(
        "owned.yaml",
        manifest(
          "version: 1",
          "owner: team-a",
          "projects:",
          '  "1":',
          "    plugin_configs:",
          "      configs:",
          "        - { name: Legacy S3, plugin: 5, deleted: true }",
        ),
      );
      for (const [file, gone] of [
        [deletes, ["GeoIP"]],
        [owned, ["GeoIP", "Legacy S3"]],
      ] as const) {
        const saved = join(here, "plan.json");
        const planned = await server.run(["plan", "-f", file, "--out", saved], { cwd: here });
        expect(planned.code, planned.stderr).toBe(0);
        const plan = JSON.parse(await readFile(saved, "utf8")) as {
          changes: { action: string; explicit?: true }[];
        };
        expect(validatePlan(plan)).toBe(true);
        expect(plan.changes.every((change) => change.action === "delete" && change.explicit === true)).toBe(
          true,
        );
        const applied = await server.run(["apply", "--plan", saved], { cwd: here });
        expect(applied.code, applied.stderr).toBe(0);
        const names = (await server.list(1, PC)).map((record) => record.name);
        for (const name of gone) expect(names).not.toContain(name);
        expect((await server.run(["plan", "-f", file, "--detailed-exitcode"], { cwd: here })).code).toBe(0);
      }
      expect(await server.list(2, PC)).toEqual([]);
    });
  },
);

describe.concurrent.each(["seed", "posthog-2024"] as const)("a saved plan's guards, on %s", (profile) => {
  it("an owner's prune of its only marked record is refused at apply --plan as at apply -f, and a forced apply's journal is found again by --resume", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: here, write: writeHere, remove } = await temporaryDirectory();
    onTestFinished(remove);
    // Project 2: GeoIP without a mark (prune leaves it alone), Billing with team-a's.
    const created = await server.call("POST", "/api/projects/2/plugin_configs/", {
      plugin: 2,
      name: "Billing",
      enabled: false,
      order: 6,
      description: "[pcsync owner=team-a]",
    });
    expect(created.status).toBe(201);
    const file = await writeHere(
      "owner.yaml",
      manifest(
        "version: 1",
        "owner: team-a",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      prune: true",
        "      configs: []",
      ),
    );
    const saved = join(here, "plan.json");
    expect((await server.run(["plan", "-f", file, "--out", saved], { cwd: here })).code).toBe(0);
    expect(JSON.parse(await readFile(saved, "utf8"))).toMatchObject({
      guards: [{ rule: "prune_to_empty", owner: "team-a", owned: 1, deletes: 1 }],
    });
    for (const args of [
      ["-f", file, "--auto-approve"],
      ["--plan", saved],
    ]) {
      const refused = await server.run(["apply", ...args], { cwd: here });
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr).toContain('prune would delete the only record of owner "team-a"');
    }
    expect((await server.list(2, PC)).map((record) => record.name)).toContain("Billing");
    const forced = await server.run(["apply", "--plan", saved, "--force"], { cwd: here });
    expect(forced.code, forced.stderr).toBe(0);
    expect((await server.list(2, PC)).map((record) => record.name)).toEqual(["GeoIP"]);
    // A saved plan's journal is found by the plan it applied, as its file holds it, whatever
    // guards are computed again at apply time: here the delete guard's share, of a plan made
    // with a larger one (4 of project 2's 10 records pruned, 40 %; apply's default allows 30).
    for (let index = 1; index <= 9; index++)
      await server.call("POST", "/api/projects/2/plugin_configs/", {
        plugin: 2,
        name: `r${index}`,
        enabled: false,
        order: 10 + index,
      });
    const share = await writeHere(
      "share.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
        ...[1, 2, 3, 4, 5].map((index) => `        - { name: r${index}, plugin: 2 }`),
      ),
    );
    const limits = join(here, "limits.json");
    const planned = await server.run(["plan", "-f", share, "--out", limits, "--max-delete-percent", "50"], {
      cwd: here,
    });
    expect(planned.code, planned.stderr).toBe(0);
    expect(JSON.parse(await readFile(limits, "utf8"))).toMatchObject({ guards: [] });
    expect((await server.run(["apply", "--plan", limits], { cwd: here })).code).toBe(3);
    const applied = await server.run(["apply", "--plan", limits, "--force"], { cwd: here });
    expect(applied.code, applied.stderr).toBe(0);
    expect(await server.list(2, PC)).toHaveLength(6);
    const resumed = await server.run(["apply", "--plan", limits, "--resume", "--force"], { cwd: here });
    expect(resumed.code, resumed.stderr).toBe(0);
  });
});
