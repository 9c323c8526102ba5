// E2E: a plan warns, in every format and in the saved plan, of an order its configs share with a
// record the manifest does not manage; the warning changes neither exit codes nor what apply does.
// On posthog-2024 plugin_configs also lists the frontend apps: those are no tie.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import type { Plan } from "../../src/plan/types.js";
import { dataWith } from "../support/emulator-data.js";
import { FE, PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
});
afterAll(() => work.remove());

// Project 3 holds a record made by hand at order 1 and, in its own family, a frontend app at order 2.
const data = () =>
  dataWith([
    { id: 100, project: 3, family: PC, plugin: 7, order: 1, name: "Hand-made" },
    { id: 101, project: 3, family: FE, plugin: 41, order: 2, name: "Pineapples" },
  ]);

// "Tracker" lands at order 1 next to "Hand-made"; "Filter" at order 2, where only the frontend app is.
const MANIFEST = manifest(
  "version: 1",
  "projects:",
  '  "3":',
  "    plugin_configs:",
  "      configs:",
  "        - name: Tracker",
  "          plugin: 3",
  "        - name: Filter",
  "          plugin: 2",
);

describe.each<ProfileName>(["seed", "posthog-2024"])("order ties on %s", (profile) => {
  let server: TestServer;
  let file: string;
  beforeAll(async () => {
    server = await startServer(profile, { data: data() });
    file = await work.write(`${profile}.yaml`, MANIFEST);
  });
  afterAll(() => server.close());

  const WARNING =
    '"Tracker" (to create) would share order 1 with unmanaged "Hand-made" (id 100): which of them runs first is not defined (the service lists them by plugin id); give the config an order no unmanaged record has (order: on every config of the family), or manage the record in the manifest (id: 100)';

  it("text: two lines of warning; with --verbose a '! order tie' line in the family; exit codes as without it", async () => {
    const terse = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(terse.code).toBe(2);
    expect(terse.stdout).not.toContain("! order tie");
    expect(terse.stdout).toMatch(
      /Plan: 2 to create, 0 to update, 0 to delete, 0 to reorder\.\nWarning: 1 order tie with records the manifest does not manage: which of them runs first is not defined \(the service lists them by plugin id\)\.\n {2}Run with --verbose for each tie and how to settle it\.\n$/,
    );
    const result = await server.run(["plan", "-f", file, "--detailed-exitcode", "--verbose"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`  ! order tie: ${WARNING}\n`);
    expect(result.stdout).not.toContain("Pineapples");
    expect(result.stdout).toMatch(
      /Plan: 2 to create, 0 to update, 0 to delete, 0 to reorder\.\nWarning: 1 order tie with records the manifest does not manage above \(marked "! order tie"\)\.\n$/,
    );
  });

  it("markdown: a warning block under the summary, and the tie in the family's diff", async () => {
    const result = await server.run(["plan", "-f", file, "--format", "markdown"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '> [!WARNING]\n> 1 order tie with records the manifest does not manage; apply is not refused.\n> - project 3 / plugin&#95;configs: "Tracker" (to create) would share order 1',
    );
    expect(result.stdout).toContain('! order tie: "Tracker" (to create) would share order 1');
  });

  it("json and the saved plan: families[].orderTies", async () => {
    const saved = join(work.path, `${profile}-plan.json`);
    const result = await server.run(["plan", "-f", file, "--format", "json", "--out", saved]);
    expect(result.code).toBe(0);
    const expected = [
      {
        order: 1,
        managed: [
          { id: null, name: "Tracker", plugin: 3, placed: "create", source: expect.stringMatching(/:6$/) },
        ],
        unmanaged: [{ id: 100, name: "Hand-made", plugin: 7 }],
      },
    ];
    for (const text of [result.stdout, await readFile(saved, "utf8")]) {
      const plan = JSON.parse(text) as Plan;
      expect(plan.families.map((family) => family.orderTies)).toEqual([expected]);
    }
  });

  it("after apply the tie is kept, and still said, while --detailed-exitcode says no changes", async () => {
    const applied = await server.run(["apply", "-f", file, "--auto-approve"]);
    expect(applied.code).toBe(0);
    const orders = (await server.list(3, PC)).map((record) => [record.name, record.order]);
    expect(orders).toContainEqual(["Hand-made", 1]);
    expect(orders).toContainEqual(["Tracker", 1]);
    const again = await server.run(["plan", "-f", file, "--detailed-exitcode", "-v"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('! order tie: "Tracker" (id ');
    expect(again.stdout).toContain(') shares order 1 with unmanaged "Hand-made" (id 100)');
    expect(again.stdout).toContain("No changes.");

    // Export applies the same rule: it writes the tie as it is, and says so.
    const exported = await server.run(["export", "--project", "3"]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(
      /^warning: records "Tracker" \(id \d+\), "Hand-made" \(id 100\) in plugin_configs share order 1: which of them runs first is not defined \(the service lists them by plugin id\); exported as they are, give them distinct orders in the manifest to settle it\n$/,
    );
  });
});
