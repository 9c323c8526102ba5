// E2E on both profiles: protected records (refused at plan and at apply, --force does not lift it,
// --allow-destroy does, a saved plan edited by hand meets it again), ignored fields, `fields: all`,
// the update guard, targeting (a partial saved plan, then a full plan shows the rest), and an
// export that writes every field so that a hand edit of any of them is drift.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { fingerprintRecord, recordKey } from "../../src/plan/fingerprint.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { PC } from "../support/families.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const MANIFEST = `version: 1
templates:
  base:
    plugin_configs:
      protect: ["Keep*"]
      configs:
        - { name: Keep A, plugin: 1, enabled: true, protect: true }
projects:
  "3":
    use: [base]
    plugin_configs:
      prune: true
      fields: all
      configs:
        - { name: C1, plugin: 2, enabled: true, ignore_fields: [description] }
        - { name: C2, plugin: 2 }
        - { name: C3, plugin: 2 }
        - { name: C4, plugin: 2 }
`;

describe.each<ProfileName>(["seed", "posthog-2024"])("safety controls on %s", (profile) => {
  let server: TestServer;
  let work: WorkDir;
  const run = (...args: string[]) => server.run(args, { cwd: work.path });
  const byName = async () => new Map((await server.list(3, PC)).map((record) => [record.name, record]));

  beforeAll(async () => {
    server = await startServer(profile);
    work = await temporaryDirectory();
    await writeFile(join(work.path, "pcsync.yaml"), MANIFEST);
    expect((await run("apply", "--auto-approve")).code).toBe(0);
    expect((await run("plan", "--detailed-exitcode")).code).toBe(0);
  });
  afterAll(async () => {
    await server.close();
    await work.remove();
  });

  it("protects, ignores and manages every field; --force does not lift protection, --allow-destroy does", async () => {
    const records = await byName();
    const id = (name: string) => records.get(name)?.id ?? 0;
    await server.call("PATCH", `/api/projects/3/plugin_configs/${id("C1")}/`, { description: "hand edit" });
    await server.call("PATCH", `/api/projects/3/plugin_configs/${id("C2")}/`, { match_action: 5 });
    await server.call("POST", "/api/projects/3/plugin_configs/", { name: "Keep B", plugin: 3, order: 9 });

    const planned = await run("plan", "--format", "json");
    expect(planned.code).toBe(3);
    expect(planned.stderr).toContain("refusing the plan: it deletes protected records");
    expect(planned.stderr).toContain('"Keep B" (id ');
    const json = JSON.parse(planned.stdout);
    expect(json.families[0]).toMatchObject({
      ignored: 1,
      protect: expect.arrayContaining([{ pattern: "Keep*", source: "pcsync.yaml:5" }]),
    });
    expect(json.changes).toEqual([
      expect.objectContaining({
        action: "update",
        name: "C2",
        fields: { match_action: { from: 5, to: null } },
      }),
      expect.objectContaining({ action: "delete", name: "Keep B" }),
    ]);

    const forced = await run("apply", "--auto-approve", "--force");
    expect(forced.code).toBe(3);
    expect((await byName()).has("Keep B")).toBe(true);
    // In JSON, the plan and why it was refused (stdout was empty).
    const refusedJson = await run("apply", "--auto-approve", "--force", "--format", "json");
    expect(refusedJson.code).toBe(3);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({ plan: { format: "pcsync-plan" }, result: null });
    expect(JSON.parse(refusedJson.stdout).refused).toContain("Keep B");

    expect((await run("plan", "--allow-destroy", "Keep B", "-o", "allowed.json")).code).toBe(0);
    const unapproved = await run("apply", "--plan", "allowed.json");
    expect(unapproved.code).toBe(3);
    expect(unapproved.stderr).toContain("--allow-destroy");
    expect((await byName()).has("Keep B")).toBe(true);
    expect((await run("apply", "--plan", "allowed.json", "--allow-destroy", "Keep ?")).code).toBe(3);
    expect((await run("apply", "--plan", "allowed.json", "--allow-destroy", "Keep B")).code).toBe(0);

    const after = await byName();
    expect(after.has("Keep B")).toBe(false);
    expect(after.get("C1")?.description).toBe("hand edit");
    expect(after.get("C2")).toMatchObject({ match_action: null });
    const again = await run("plan", "--detailed-exitcode");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("ignored: 1 difference");
  });

  it("refuses a protected delete added to a saved plan by hand, naming the record as the service shows it", async () => {
    expect((await run("plan", "-o", "clean.json")).code).toBe(0);
    const plan = JSON.parse(await readFile(join(work.path, "clean.json"), "utf8"));
    const keep = (await byName()).get("Keep A");
    plan.changes.push({
      action: "delete",
      project: "3",
      family: PC,
      name: "Renamed",
      id: keep?.id,
      fields: {},
      source: "pcsync.yaml:11",
    });
    plan.summary.delete = 1;
    // Forged consistently (its fingerprint added, the record no longer listed as left alone), so
    // that the plan's own checks pass and protection is what refuses it.
    if (keep) plan.fingerprints[recordKey("3", PC, keep.id)] = fingerprintRecord(keep as PluginConfigRecord);
    for (const family of plan.families) {
      family.unmanaged = family.unmanaged.filter((record: { id: number }) => record.id !== keep?.id);
    }
    await writeFile(join(work.path, "edited.json"), JSON.stringify(plan));
    const result = await run("apply", "--plan", "edited.json", "--force");
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`"Keep A" (id ${keep?.id}, protected by "Keep*"`);
    expect((await byName()).has("Keep A")).toBe(true);
  });

  it("a partial saved plan applies only its part, and a later full plan shows the rest", async () => {
    const edited = MANIFEST.replace("{ name: C3, plugin: 2 }", "{ name: C3, plugin: 2, enabled: true }")
      .replace("{ name: C4, plugin: 2 }", "{ name: C4, plugin: 2, enabled: true }")
      .replace("{ name: C1, plugin: 2, enabled: true,", "{ name: C1, plugin: 2, enabled: true, order: 9,")
      .replace(
        /\{ name: (Keep A|C2|C3|C4), plugin: (\d)/g,
        (_, name, plugin) =>
          `{ name: ${name}, plugin: ${plugin}, order: ${["Keep A", "C2", "C3", "C4"].indexOf(name) + 1}`,
      );
    await writeFile(join(work.path, "targeted.yaml"), edited);
    const partial = await run(
      "plan",
      "-f",
      "targeted.yaml",
      "--target",
      "C3",
      "-o",
      "part.json",
      "--format",
      "json",
    );
    expect(partial.code, partial.stderr).toBe(0);
    const saved = JSON.parse(await readFile(join(work.path, "part.json"), "utf8"));
    expect(saved).toMatchObject({ partial: true, targets: { target: ["C3"], exclude: [] }, reorders: [] });
    expect(saved.changes.map((change: { name: string }) => change.name)).toEqual(["C3"]);
    expect(saved.families[0].reorderLeftOut).toBe(true);
    expect((await run("apply", "--plan", "part.json")).code).toBe(0);
    const records = await byName();
    expect(records.get("C3")?.enabled).toBe(true);
    expect(records.get("C4")?.enabled).toBe(false);
    const rest = await run("plan", "-f", "targeted.yaml");
    expect(rest.stdout).toContain('~ update "C4"');
    expect(rest.stdout).not.toContain('~ update "C3"');
    expect(rest.stdout).toContain("reorder:");
    expect(rest.stdout).not.toContain("Partial plan");
    const typo = await run("plan", "-f", "targeted.yaml", "--target", "C33");
    expect(typo.stderr).toContain(
      'warning: --target "C33" matches no config of the manifest and no record read; did you mean "C3"?',
    );
    // Narrowed by --project or --family, the warning says its reach: the name may be elsewhere.
    const narrowed = await run(
      "plan",
      "-f",
      "targeted.yaml",
      "--target",
      "C33",
      "--family",
      "plugin_configs",
    );
    expect(narrowed.stderr).toContain(
      `warning: --target "C33" matches no config of the manifest and no record read in this run's scope (--family); did you mean "C3"?`,
    );
  });

  it("export writes every field, nulls included, so an exported manifest sees a hand edit of any of them", async () => {
    for (const templates of [[], ["--templates"]]) {
      const out = `export${templates.length}.yaml`;
      expect((await run("export", "--project", "3", ...templates, "-o", out)).code).toBe(0);
      const text = await readFile(join(work.path, out), "utf8");
      expect(text).toContain("match_action: null");
      expect((await run("plan", "-f", out, "--detailed-exitcode")).code).toBe(0);
      const c4 = (await byName()).get("C4");
      await server.call("PATCH", `/api/projects/3/plugin_configs/${c4?.id}/`, {
        match_action: 7,
        description: "x",
      });
      const drift = await run("plan", "-f", out, "--detailed-exitcode");
      expect(drift.code).toBe(2);
      expect(drift.stdout).toContain("match_action: 7 → null");
      await server.call("PATCH", `/api/projects/3/plugin_configs/${c4?.id}/`, {
        match_action: null,
        description: null,
      });
    }
  });
});
