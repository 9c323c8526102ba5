// E2E: `export --all` and repeated `--project` write every project; the file plans back to no
// changes on both profiles, names that need YAML quoting or hold `${` included.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { ProfileName } from "../../src/emulator/index.js";
import { runBuiltCli } from "../support/cli.js";
import { storedRecord } from "../support/emulator-data.js";
import { FE, PC } from "../support/families.js";
import { fleetData } from "../support/fleet-data.js";
import { sendJson, startScriptedServer } from "../support/scripted-server.js";
import { openServer, startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

// One directory for the file's tests; each file written gets a name of its own (see work-dir.ts).
const work = await temporaryDirectory();
afterAll(() => work.remove());
const dir = work.path;
const write = work.write;

describe.concurrent.each<ProfileName>(["seed", "posthog-2024"])("export --all on %s", (profile) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer(profile, { data: fleetData() });
  });
  afterAll(() => server.close());

  it("writes every project the key sees, and plans back to no changes", async () => {
    const exported = await server.run(["export", "--all"]);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    const document = parse(exported.stdout) as {
      projects: Record<string, Record<string, { configs: unknown[] }>>;
    };
    expect(Object.keys(document.projects)).toEqual(["1", "2", "3", "4", "5", "6"]);
    // posthog-2024 lists frontend apps in plugin_configs too: each is exported once, in its family.
    expect(exported.stdout.match(/name: Notification Bar/g)).toHaveLength(4);
    const file = await write(`all-${profile}.yaml`, exported.stdout);
    const plan = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(plan.stdout).toContain("No changes.");
    expect(plan.code).toBe(0);
  });

  it("a name or description holding ${ is written as $${ and plans back unchanged", async () => {
    const exported = await server.run(["export", "--project", "4"]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain("name: Cost $${MONTH}\n");
    expect(exported.stdout).toContain("description: Drops $${internal}\n");
    const file = await write(`escaped-${profile}.yaml`, exported.stdout);
    const plan = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(plan.stderr).toBe("");
    expect(plan.code).toBe(0);
  });

  it("--project is repeatable: each project once, in id order", async () => {
    const exported = await server.run(["export", "--project", "5", "--project", "1", "--project", "5"]);
    expect(exported.code).toBe(0);
    const document = parse(exported.stdout) as { projects: Record<string, unknown> };
    expect(Object.keys(document.projects)).toEqual(["1", "5"]);
    const file = await write(`two-${profile}.yaml`, exported.stdout);
    expect((await server.run(["plan", "-f", file, "--detailed-exitcode"])).code).toBe(0);
  });

  it("-o an existing manifest: every project is updated in place, comments kept", async () => {
    const target = join(dir, `existing-${profile}.yaml`);
    await writeFile(
      target,
      [
        "# Kept by the web team",
        "version: 1",
        "projects:",
        '  "4":',
        "    plugin_configs:",
        "      configs: []",
        "",
      ].join("\n"),
    );
    const exported = await server.run(["export", "--all", "-o", target]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/^Updated \d+ configs of 6 projects in /);
    const text = await readFile(target, "utf8");
    expect(text).toContain("# Kept by the web team");
    expect((await server.run(["plan", "-f", target, "--detailed-exitcode"])).code).toBe(0);
  });
});

describe.concurrent("export project selection", () => {
  it("--all and --project together, or neither: a usage error (exit 1) before any request", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const both = await server.run(["export", "--all", "--project", "1"]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("give either --all or --project <id>, not both");
    const neither = await server.run(["export"]);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain("--project <id> or --all is required");
    // Before the connection too: with no server and no key given, the usage error still comes first.
    for (const args of [["export", "--all", "--project", "1"], ["export"], ["export", "--project", ""]]) {
      const unconnected = await runBuiltCli(args, { env: {} });
      expect(unconnected.code, unconnected.stderr).toBe(1);
      expect(unconnected.stderr).toMatch(/not both|is required|--project <id>/);
      expect(unconnected.stderr).not.toMatch(/base URL|API key/i);
    }
  });

  it("a key that sees no project: --all says so (exit 1) and writes nothing", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { key: { scopes: null, projects: [] } });
    const target = join(dir, "none.yaml");
    const result = await server.run(["export", "--all", "-o", target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("the API key sees no project, so there is nothing to export");
    await expect(readFile(target, "utf8")).rejects.toThrow();
  });

  it("--all reads every page of the project list", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: fleetData() });
    // In front of the emulator: the project list in pages of 2, whatever limit the client asks for.
    const front = await startScriptedServer(async (request, response) => {
      const target = new URL(request.url, server.emulator.url);
      if (target.pathname === "/api/projects/") target.searchParams.set("limit", "2");
      const reply = await fetch(target, { headers: { authorization: request.headers.authorization ?? "" } });
      const text = (await reply.text()).replaceAll(server.emulator.url, front.url);
      sendJson(response, reply.status, JSON.parse(text));
    });
    onTestFinished(() => front.close());
    const exported = await server.run(["export", "--all", "--family", FE], {
      env: { PCSYNC_BASE_URL: front.url },
    });
    expect(exported.code).toBe(0);
    const document = parse(exported.stdout) as { projects: Record<string, unknown> };
    expect(Object.keys(document.projects)).toEqual(["1", "2", "3", "4", "5", "6"]);
    const pages = front.requests.filter((request) => request.url.startsWith("/api/projects/?"));
    expect(pages.map((request) => new URL(request.url, front.url).searchParams.get("offset"))).toEqual([
      null,
      "2",
      "4",
    ]);
  });

  it("each warning names its project; a record pinned by id stays with its project", async ({
    onTestFinished,
  }) => {
    const data = fleetData();
    for (const project of [4, 5]) {
      for (const id of [900 + project * 2, 901 + project * 2]) {
        data.records.push(storedRecord({ id, project, family: PC, plugin: 6, order: 30, name: "Twin" }));
      }
    }
    const server = await openServer(onTestFinished, "seed", { data });
    const result = await server.run(["export", "--all", "--templates"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'warning: project 4: 2 records in plugin_configs are named "Twin" (ids 908, 909)',
    );
    expect(result.stderr).toContain(
      'warning: project 5: 2 records in plugin_configs are named "Twin" (ids 910, 911)',
    );
    const document = parse(result.stdout) as {
      projects: Record<string, { plugin_configs?: { configs: { name: string; id?: number }[] } }>;
    };
    expect(document.projects["4"]?.plugin_configs?.configs).toContainEqual(
      expect.objectContaining({ name: "Twin", id: 908 }),
    );
    expect(document.projects["5"]?.plugin_configs?.configs).toContainEqual(
      expect.objectContaining({ name: "Twin", id: 910 }),
    );
  });

  it("a stored name the service would trim is exported trimmed and pinned by id; one apply renames it", async ({
    onTestFinished,
  }) => {
    const data = fleetData();
    data.records.push(
      storedRecord({ id: 950, project: 4, family: PC, plugin: 7, order: 40, name: " padded\t" }),
    );
    const server = await openServer(onTestFinished, "seed", { data });
    const target = join(dir, "padded.yaml");
    const exported = await server.run(["export", "--project", "4", "-o", target]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain(
      'warning: record 950 in plugin_configs is named " padded\\t", with white space at its ends',
    );
    expect(await readFile(target, "utf8")).toMatch(/- name: padded\n\s+id: 950\n/);
    const plan = await server.run(["plan", "-f", target, "--detailed-exitcode"]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('name: " padded\\t" → "padded"');
    expect((await server.run(["apply", "--auto-approve", "-f", target])).code).toBe(0);
    expect((await server.run(["plan", "-f", target, "--detailed-exitcode"])).code).toBe(0);
  });

  it("--templates never updates an existing file (exit 1, file unchanged)", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: fleetData() });
    const target = await write("kept.yaml", "version: 1\nprojects: {}\n");
    const result = await server.run(["export", "--all", "--templates", "-o", target]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("export --templates writes a new manifest and does not update one");
    expect(await readFile(target, "utf8")).toBe("version: 1\nprojects: {}\n");
  });

  it("--templates writes shared configs once, as templates the projects use", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "posthog-2024", { data: fleetData() });
    const result = await server.run(["export", "--all", "--templates"]);
    expect(result.code).toBe(0);
    const document = parse(result.stdout) as {
      templates: Record<string, Record<string, { configs: { name: string }[] }>>;
      projects: Record<string, { use?: string[] }>;
    };
    expect(Object.keys(document.templates).length).toBeGreaterThan(0);
    // Project 4 shares its BigQuery with 5 and its Pineapple Mode with 6: it uses what they use, and more.
    const uses = ["4", "5", "6"].map((project) => document.projects[project]?.use ?? []);
    for (const use of uses.slice(1)) expect(uses[0]).toEqual(expect.arrayContaining(use));
    expect(uses[0]?.length).toBeGreaterThan(Math.max(uses[1]?.length ?? 0, uses[2]?.length ?? 0));
    const writtenOut = await server.run(["export", "--all"]);
    expect(result.stdout.length).toBeLessThan(writtenOut.stdout.length);
    // The frontend apps the posthog-2024 plugin_configs list shows are templated in their own family.
    const pluginConfigs = Object.values(document.templates).flatMap(
      (template) => template[PC]?.configs ?? [],
    );
    expect(pluginConfigs.map((config) => config.name)).not.toContain("Notification Bar");
    expect(result.stdout).not.toContain("id:");
    const target = join(dir, "fleet.yaml");
    const written = await server.run(["export", "--all", "--templates", "-o", target]);
    expect(written.stderr).toBe(
      `Wrote 37 configs of 6 projects in ${target} (${Object.keys(document.templates).length} templates)\n`,
    );
    expect(await readFile(target, "utf8")).toBe(result.stdout);
  });
});
