// E2E: the owner mark seen the same way by every command that reads a description after an apply
// of an `owner:` manifest: resume from its journal, and export (which writes the owner back).

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROFILE_NAMES, type ProfileName } from "../../src/emulator/index.js";
import { writeMark } from "../../src/owner-mark.js";
import { EXAMPLES } from "../support/paths.js";
import { type OnFinished, openServer } from "../support/test-server.js";
import { temporaryDirectory } from "../support/work-dir.js";

const OWNERS = join(EXAMPLES, "owners");

/**
 * A server whose project 1 the two example owners share (data-platform's GeoIP, web's Property
 * Filter, Legacy S3 unmarked), and the ids of its records by name.
 */
async function withBothOwners(onTestFinished: OnFinished, profile: ProfileName) {
  const server = await openServer(onTestFinished, profile);
  for (const file of ["data-platform.yaml", "web.yaml"]) {
    const run = await server.run(["apply", "-f", join(OWNERS, file), "--auto-approve"]);
    expect(run.code, run.stderr).toBe(0);
  }
  const listed = await server.list(1, "plugin_configs");
  return { server, idOf: (name: string) => listed.find((record) => record.name === name)?.id };
}

// Several CLI runs per test: generous under a loaded machine, seconds when it is not.
describe.concurrent.each(PROFILE_NAMES)("owner marks on %s", { timeout: 90_000 }, (profile) => {
  it("resumes a run of an owner: plan killed before any answer: every write is found done", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const plan = join(dir, "plan.json");
    const manifest = join(OWNERS, "data-platform.yaml");
    expect((await server.run(["plan", "-f", manifest, "-o", plan])).code).toBe(0);
    const journal = join(dir, "apply.jsonl");
    const applied = await server.run(["apply", "--plan", plan, "--auto-approve", "--journal", journal]);
    expect(applied.code, applied.stderr).toBe(0);
    // As a run killed after its writes were sent, before any answer came: intents only.
    const lines = (await readFile(journal, "utf8")).split("\n");
    await writeFile(
      journal,
      lines
        .filter((line) => line.includes('"type":"header"') || line.includes('"type":"intent"'))
        .map((line) => `${line}\n`)
        .join(""),
    );
    const resumed = await server.run([
      "apply",
      "--plan",
      plan,
      "--resume",
      "--journal",
      journal,
      "--auto-approve",
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/stale|changed since/);
    expect((await server.run(["plan", "-f", manifest, "--detailed-exitcode"])).code).toBe(0);
  });

  it("watch sees no drift in a marked record, drift in its text, and heals it under the mark", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const manifest = join(OWNERS, "data-platform.yaml");
    expect((await server.run(["apply", "-f", manifest, "--auto-approve"])).code).toBe(0);
    const quiet = await server.run(["watch", "--once", "-f", manifest]);
    expect(quiet.code, `${quiet.stdout}${quiet.stderr}`).toBe(0);
    expect(`${quiet.stdout}${quiet.stderr}`).toMatch(/0 drifting/);
    const geoip = (await server.list(1, "plugin_configs")).find((record) => record.name === "GeoIP");
    const path = `/api/projects/1/plugin_configs/${geoip?.id}/`;
    expect(
      (await server.call("PATCH", path, { description: writeMark("Edited", "data-platform") })).status,
    ).toBe(200);
    const drift = await server.run(["watch", "--once", "-f", manifest]);
    const said = `${drift.stdout}${drift.stderr}`;
    expect(drift.code, said).not.toBe(0);
    expect(said).toMatch(/1 drifting \(1 change\)/);
    expect(said).not.toContain("[pcsync owner=");
    const healed = await server.run(["watch", "--once", "--mode", "heal", "-f", manifest]);
    expect(healed.code, `${healed.stdout}${healed.stderr}`).toBe(0);
    const stored = server.emulator.snapshot().records.find((record) => record.id === geoip?.id)?.description;
    expect(stored).toBe(writeMark("Adds country to events", "data-platform"));
  });

  it("exports the owner whose mark every record carries; applied back, it plans no changes", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    // Project 2's records, all adopted by one owner: its export, with owner: added, applied.
    const plain = join(dir, "plain.yaml");
    const first = await server.run(["export", "--project", "2", "-o", plain]);
    expect(first.code, first.stderr).toBe(0);
    expect(await readFile(plain, "utf8")).not.toContain("owner:");
    const owned = join(dir, "owned.yaml");
    await writeFile(
      owned,
      (await readFile(plain, "utf8")).replace(/^version: 1$/m, "version: 1\nowner: team-a"),
    );
    const adopted = await server.run(["apply", "-f", owned, "--auto-approve"]);
    expect(adopted.code, adopted.stderr).toBe(0);
    expect(adopted.stdout).toContain('owner: (no mark) → "team-a"');

    const exported = await server.run(["export", "--project", "2"]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).not.toContain("warning");
    expect(exported.stdout).toMatch(/^version: 1\nowner: team-a\n/m);
    expect(exported.stdout).not.toContain("[pcsync owner=");
    const again = join(dir, "again.yaml");
    await writeFile(again, exported.stdout);
    const planned = await server.run(["plan", "-f", again, "--detailed-exitcode"]);
    expect(planned.code, planned.stdout).toBe(0);
    // An existing manifest without owner: gets it, after version:, and still plans no changes.
    const updated = await server.run(["export", "--project", "2", "-o", plain]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(await readFile(plain, "utf8")).toMatch(/^version: 1\nowner: team-a\n/m);
    expect((await server.run(["plan", "-f", plain, "--detailed-exitcode"])).code).toBe(0);
  });

  it("warns of mixed marks, naming each owner and its records, and writes no owner:", async ({
    onTestFinished,
  }) => {
    const { server, idOf } = await withBothOwners(onTestFinished, profile);
    const exported = await server.run(["export", "--project", "1", "--family", "plugin_configs"]);
    expect(exported.code, exported.stderr).toBe(0);
    const warning = exported.stderr.split("\n").find((line) => line.includes("different owner marks")) ?? "";
    expect(warning).toContain(
      `owner "data-platform": "GeoIP" (id ${idOf("GeoIP")}) in project 1 plugin_configs`,
    );
    expect(warning).toContain(
      `owner "web": "Property Filter" (id ${idOf("Property Filter")}) in project 1 plugin_configs`,
    );
    expect(warning).toContain(`no owner mark: "Legacy S3" (id ${idOf("Legacy S3")})`);
    expect(exported.stdout).not.toContain("owner:");
    expect(exported.stdout).toContain("description: Adds country to events");
  });

  it("exported with mixed marks into a file that names its owner, says what a plan does with each record", async ({
    onTestFinished,
  }) => {
    const { server, idOf } = await withBothOwners(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const owned = join(dir, "owned.yaml");
    await writeFile(owned, "version: 1\nowner: web\nprojects: {}\n");
    const exported = await server.run([
      "export",
      "--project",
      "1",
      "--family",
      "plugin_configs",
      "-o",
      owned,
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    // Not "written without owner:", which it is not: the file keeps its owner, and the warning says
    // what a plan of it does with the records that do not carry web's mark.
    expect(exported.stderr).not.toContain("different owner marks");
    const warning =
      exported.stderr.split("\n").find((line) => line.includes('the file says owner: "web"')) ?? "";
    expect(warning).toContain(
      `"Legacy S3" (id ${idOf("Legacy S3")}) in project 1 plugin_configs carries no owner mark: a plan adopts it for owner "web"`,
    );
    expect(warning).toContain(
      `owner "data-platform": "GeoIP" (id ${idOf("GeoIP")}) in project 1 plugin_configs, which a plan refuses as another owner's (exit 3)`,
    );
    expect(warning).not.toContain("Property Filter");
    expect(await readFile(owned, "utf8")).toMatch(/^owner: web$/m);
    const planned = await server.run(["plan", "-f", owned]);
    expect(planned.code).toBe(3);
    expect(`${planned.stdout}${planned.stderr}`).toContain("data-platform");
  });

  it("reads a target's owner: ${OWNER} as it interpolates, in the warning about marks", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const applied = await server.run(["apply", "-f", join(OWNERS, "data-platform.yaml"), "--auto-approve"]);
    expect(applied.code, applied.stderr).toBe(0);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const owned = join(dir, "owned.yaml");
    await writeFile(owned, 'version: 1\nowner: "${OWNER}"\nprojects: {}\n');
    const env = { PCSYNC_VAR_OWNER: "data-platform" };
    const exported = await server.run(
      ["export", "--project", "1", "--family", "plugin_configs", "-o", owned],
      { env },
    );
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain('the file says owner: "data-platform"');
    // GeoIP carries data-platform's mark: the file's own owner, never "another owner's".
    expect(exported.stderr).not.toMatch(/another owner|\$\{OWNER\}/);
  });

  it("exported with mixed marks, leaves out a record whose own text ends like a mark, and plans back to no changes", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const owned = join(dir, "team-a.yaml");
    await writeFile(
      owned,
      [
        "version: 1",
        "owner: team-a",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - name: E3",
        "          plugin: 5",
        `          description: ${JSON.stringify("ends in mark\n\n[pcsync owner=other]")}`,
      ].join("\n"),
    );
    expect((await server.run(["apply", "-f", owned, "--auto-approve"])).code).toBe(0);
    // Project 2 also holds GeoIP, unmarked: mixed marks, so the export has no owner:.
    const exported = join(dir, "exported.yaml");
    const run = await server.run(["export", "--project", "2", "-o", exported]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      '"E3" in plugin_configs has a description that ends in text like an owner mark',
    );
    const planned = await server.run(["plan", "-f", exported, "--detailed-exitcode"]);
    expect(planned.code, `${planned.stdout}${planned.stderr}`).toBe(0);
  });

  it("shows a description that only looks like an owner mark as text, in text and markdown plans, never as the owner", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const file = join(dir, "looks-marked.yaml");
    const write = (text: string) =>
      writeFile(
        file,
        [
          "version: 1",
          "owner: team-a",
          "projects:",
          '  "2":',
          "    plugin_configs:",
          "      configs:",
          "        - name: E3",
          "          plugin: 5",
          `          description: ${JSON.stringify(`${text}\n\n[pcsync owner=other]`)}`,
        ].join("\n"),
      );
    await write("ends in mark");
    for (const format of ["text", "markdown"]) {
      const created = await server.run(["plan", "-f", file, "--format", format]);
      expect(created.stdout).toContain('"ends in mark\\n\\n[pcsync owner=other]"');
      expect(created.stdout).not.toMatch(/owner: .*"other"/);
    }
    expect((await server.run(["apply", "-f", file, "--auto-approve"])).code).toBe(0);
    await write("ends in a mark");
    for (const format of ["text", "markdown"]) {
      const updated = await server.run(["plan", "-f", file, "--format", format]);
      expect(updated.stdout).toContain(
        '"ends in mark\\n\\n[pcsync owner=other]" → "ends in a mark\\n\\n[pcsync owner=other]"',
      );
      expect(updated.stdout).not.toMatch(/owner: /);
    }
  });

  it("export -o refuses a file that is not a pcsync manifest and leaves it byte for byte", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, profile);
    const { path: dir, remove } = await temporaryDirectory();
    onTestFinished(remove);
    const files: [string, string][] = [
      ["docker-compose.yml", 'version: "3.8"\nservices:\n  web:\n    image: nginx # pinned\n'],
      ["empty.yaml", ""],
      ["list.yaml", "- a\n- b\n"],
      ["values.yaml", "# Helm values\nreplicaCount: 2\nimage:\n  tag: latest\n"],
    ];
    for (const [name, text] of files) {
      const path = join(dir, name);
      await writeFile(path, text);
      const refused = await server.runBuilt(["export", "--project", "1", "-o", path]);
      expect(refused.code, `${name}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr).toContain(`${path} is not a pcsync manifest (`);
      expect(refused.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(await readFile(path, "utf8"), name).toBe(text);
    }
    // Refused before any request: no server is needed to say so.
    const compose = join(dir, "docker-compose.yml");
    const offline = await server.run(["export", "--project", "1", "-o", compose], {
      env: { PCSYNC_BASE_URL: "http://127.0.0.1:9" },
    });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain("is not a pcsync manifest");
    // A manifest with a comment header is one: updated, the header kept.
    const manifest = join(dir, "pcsync.yaml");
    await writeFile(manifest, "# Our configs.\nversion: 1\nprojects: {}\n");
    const updated = await server.run(["export", "--project", "1", "-o", manifest]);
    expect(updated.code, updated.stderr).toBe(0);
    const text = await readFile(manifest, "utf8");
    expect(text.startsWith("# Our configs.\nversion: 1\n")).toBe(true);
    expect((await server.run(["plan", "-f", manifest, "--detailed-exitcode"])).code).toBe(0);
  });
});
