// E2E: one notion of a record's name across identity and every glob. Names with `-` in protect:,
// --target, --exclude and --allow-destroy work at validate, plan, apply and watch --once; a
// protected look-alike (NFD `café`, `Billing ` with a trailing space) is not pruned by a manifest
// that protects `café` / `Billing`; and `protect: ["*"]` protects a record that has no name.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { PC } from "../support/families.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let server: TestServer;
let work: WorkDir;
const run = (...args: string[]) => server.run(args, { cwd: work.path });
const names = async () => (await server.list(3, PC)).map((record) => record.name);
const create = async (name: string | null, plugin: number, order: number) => {
  const reply = await server.call("POST", `/api/projects/3/${PC}/`, { name, plugin, order, enabled: false });
  expect(reply.status).toBe(201);
};
const manifest = (body: string) =>
  writeFile(join(work.path, "pcsync.yaml"), `version: 1\nprojects:\n  "3":\n${body}`);
const noInternalError = (result: { stderr: string }) => {
  expect(result.stderr).not.toContain("internal error");
  expect(result.stderr).not.toContain("SyntaxError");
};

async function open(profile: ProfileName): Promise<void> {
  server = await startServer(profile);
  work = await temporaryDirectory();
}
afterEach(async () => {
  await server.close();
  await work.remove();
});

describe.each<ProfileName>(["seed", "posthog-2024"])("globs with a '-' on %s", (profile) => {
  beforeEach(() => open(profile));

  it("work at validate, plan, apply and watch --once: --target, --exclude, protect: and --allow-destroy", async () => {
    await create("billing-eu", 1, 1);
    await create("billing-us", 1, 2);
    await create("cfg-001", 2, 3);
    await create("bot-filter", 2, 4);
    await create("other-x", 3, 5);
    await manifest(`    plugin_configs:
      prune: true
      protect: ["cfg-00*", "bot-*"]
      configs:
        - { name: billing-eu, plugin: 1, enabled: true, order: 1 }
        - { name: billing-us, plugin: 1, enabled: true, order: 2 }
        - { name: keep-a, plugin: 3, order: 6 }
`);
    const validated = await run("validate");
    noInternalError(validated);
    expect(validated.code, validated.stderr).toBe(0);
    // Neither protect: glob names a config of the manifest: a warning each, not a crash.
    expect(validated.stderr).toContain('protect: "bot-*" matches no config');
    expect(validated.stderr).toContain('protect: "cfg-00*" matches no config');

    const partial = await run("plan", "--target", "billing-*", "--exclude", "*-us", "--format", "json");
    noInternalError(partial);
    expect(partial.code, partial.stderr).toBe(0);
    const planned = JSON.parse(partial.stdout);
    expect(planned.partial).toBe(true);
    expect(planned.changes.map((change: { name: string }) => change.name)).toEqual(["billing-eu"]);

    const targeted = await run("apply", "--auto-approve", "--target", "billing-*");
    noInternalError(targeted);
    expect(targeted.code, targeted.stderr).toBe(0);
    const afterTargeted = await server.list(3, PC);
    expect(afterTargeted.filter((record) => record.enabled).map((record) => record.name)).toEqual([
      "billing-eu",
      "billing-us",
    ]);
    expect(afterTargeted.map((record) => record.name)).not.toContain("keep-a");

    const watched = await run("watch", "--once", "--target", "billing-*", "--listen", "127.0.0.1:0");
    noInternalError(watched);
    expect(watched.code, watched.stderr).toBe(0);

    // The full plan deletes two protected records: refused, naming each with its glob.
    const refused = await run("plan");
    noInternalError(refused);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('"cfg-001" (id ');
    expect(refused.stderr).toContain('protected by "cfg-00*"');
    expect(refused.stderr).toContain('"bot-filter" (id ');

    const halfAllowed = await run("apply", "--auto-approve", "--allow-destroy", "bot-filter");
    noInternalError(halfAllowed);
    expect(halfAllowed.code).toBe(3);
    expect(halfAllowed.stderr).toContain('"cfg-001" (id ');
    expect(halfAllowed.stderr).not.toContain('"bot-filter" (id ');
    expect(await names()).toContain("bot-filter");

    const allowed = await run(
      "apply",
      "--auto-approve",
      "--allow-destroy",
      "bot-filter",
      "--allow-destroy",
      "cfg-00*",
    );
    noInternalError(allowed);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await names()).sort()).toEqual(["billing-eu", "billing-us", "keep-a"]);
    expect((await run("plan", "--detailed-exitcode")).code).toBe(0);
  });

  it("a protected NFD 'café' is not pruned by a manifest protecting the NFC 'café'", async () => {
    await create("cafe\u0301", 1, 1);
    await create("Other", 2, 2);
    await manifest(`    plugin_configs:
      prune: true
      protect: ["caf\u00e9"]
      configs:
        - { name: Other, plugin: 2, order: 2 }
        - { name: New, plugin: 3, order: 3 }
`);
    for (const command of [["plan"], ["apply", "--auto-approve"]]) {
      const result = await run(...command);
      noInternalError(result);
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toContain('"cafe\u0301" (id ');
      expect(result.stderr).toContain('protected by "caf\u00e9"');
    }
    expect(await names()).toContain("cafe\u0301");
    // --allow-destroy spelled either way lifts it: the name is the identity rule's.
    const allowed = await run("apply", "--auto-approve", "--allow-destroy", "cafe\u0301".normalize("NFC"));
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await names()).sort()).toEqual(["New", "Other"]);
  });
});

describe("names only the seed interface keeps", () => {
  beforeEach(() => open("seed"));

  it("a protected 'Billing ' (trailing space) is not pruned by a manifest protecting 'Billing'", async () => {
    await create("Billing ", 1, 1);
    await create("Other", 2, 2);
    await manifest(`    plugin_configs:
      prune: true
      protect: [Billing]
      configs:
        - { name: Other, plugin: 2, order: 2 }
`);
    const refused = await run("apply", "--auto-approve");
    noInternalError(refused);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain('"Billing " (id ');
    expect(await names()).toContain("Billing ");
    // Targeting by the name as written reaches the look-alike too: excluded, nothing left to refuse.
    const excluded = await run("apply", "--auto-approve", "--exclude", "Billing");
    expect(excluded.code, excluded.stderr).toBe(0);
    expect(await names()).toContain("Billing ");
  });

  it('protect: ["*"] protects a record that has no name, and --allow-destroy "*" lifts it', async () => {
    await create(null, 1, 1);
    await create("Named", 2, 2);
    expect(await names()).toContain(null);
    await manifest(`    plugin_configs:
      prune: true
      protect: ["*"]
      configs:
        - { name: Named, plugin: 2, order: 2 }
`);
    const refused = await run("apply", "--auto-approve");
    noInternalError(refused);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain("no name (id ");
    expect(await names()).toContain(null);
    // --target "*" takes the unnamed record in too: still refused, not left out of the plan.
    expect((await run("plan", "--target", "*")).code).toBe(3);
    const allowed = await run("apply", "--auto-approve", "--allow-destroy", "*");
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(await names()).toEqual(["Named"]);
  });
});

describe.each<ProfileName>(["seed", "posthog-2024"])(
  "export of names no manifest can hold, on %s",
  (profile) => {
    beforeEach(() => open(profile));

    it("leaves each out with a warning that says why, and the file plans back to no changes", async () => {
      await create("Named", 1, 1);
      // Each name the profile keeps as sent (posthog-2024 may refuse or trim some): an empty one, a
      // tab inside, a line break with a workflow command after it, DEL.
      const hostile = ["", "tab\tname", "evil\n::error file=x::pwned", "del\u007fname"];
      const kept: string[] = [];
      for (const [index, name] of hostile.entries()) {
        const reply = await server.call("POST", `/api/projects/3/${PC}/`, {
          name,
          plugin: index + 2,
          order: index + 2,
          enabled: false,
        });
        if (reply.status === 201 && (reply.body as { name: unknown }).name === name) kept.push(name);
      }
      expect(kept.length).toBeGreaterThan(1);
      const exported = await run("export", "--project", "3", "-o", "exported.yaml");
      expect(exported.code, exported.stderr).toBe(0);
      const warnings = exported.stderr
        .split("\n")
        .filter((line) => line.includes("a manifest cannot hold that name"));
      expect(warnings).toHaveLength(kept.length);
      // Server text in a warning is shown on one line, nothing in it taken for a workflow command.
      for (const warning of warnings) expect(warning).not.toMatch(/^::|\n/);
      const planned = await run("plan", "-f", "exported.yaml", "--detailed-exitcode");
      expect(planned.code, `${planned.stdout}${planned.stderr}`).toBe(0);
      noInternalError(planned);
    });
  },
);

describe.each<ProfileName>(["seed", "posthog-2024"])(
  "export of names that differ only in Unicode normalisation, on %s",
  (profile) => {
    beforeEach(() => open(profile));

    it("keeps the lowest id, pinned, leaves the other out with a warning, and plans back to no changes", async () => {
      await create("Caf\u00e9", 1, 1);
      await create("Cafe\u0301", 2, 2);
      const exported = await run("export", "--project", "3", "-o", "exported.yaml");
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr).toMatch(
        /2 records in plugin_configs have names that differ only in Unicode normalisation .*only id \d+ is exported, pinned by id/,
      );
      const planned = await run("plan", "-f", "exported.yaml", "--detailed-exitcode");
      expect(planned.code, `${planned.stdout}${planned.stderr}`).toBe(0);
    });
  },
);
