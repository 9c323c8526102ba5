// E2E: two seams of the plan's output. A tie that `ignore_fields: [order]` leaves between two
// configs (the manifest's orders differ, the service's do not) is warned of like any tie; and a
// partial plan (--target/--exclude) with nothing to do says so of the targeted records only, never
// that the remote state matches the manifest, in plan and apply, text, markdown and json.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/types.js";
import { dataWith } from "../support/emulator-data.js";
import { PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir;
let server: TestServer;
beforeAll(async () => {
  work = await temporaryDirectory();
  // Project 3: "Alpha" and "Beta" both at order 1 on the service.
  server = await startServer("seed", {
    data: dataWith([
      { id: 100, project: 3, family: PC, plugin: 1, order: 1, name: "Alpha" },
      { id: 101, project: 3, family: PC, plugin: 2, order: 1, name: "Beta" },
    ]),
  });
});
afterAll(async () => {
  await server.close();
  await work.remove();
});

const config = (name: string, plugin: number, order: number, ...rest: string[]) => [
  `        - name: ${name}`,
  `          plugin: ${plugin}`,
  `          order: ${order}`,
  ...rest.map((line) => `          ${line}`),
];

describe("a tie that ignore_fields: [order] leaves", () => {
  // The manifest gives 1 and 2, so its own checks see no tie; Beta's order is left to the service.
  const MANIFEST = manifest(
    "version: 1",
    "projects:",
    '  "3":',
    "    plugin_configs:",
    "      configs:",
    ...config("Alpha", 1, 1),
    ...config("Beta", 2, 2, "ignore_fields: [order]"),
  );
  const TIE =
    '"Alpha" (id 100) and "Beta" (left here by ignore_fields, id 101) share order 1: which of them runs first is not defined (the service lists them by plugin id); ignore_fields: [order] leaves "Beta" at the service\'s order: give it a distinct order on the service, or drop order from its ignore_fields';

  it("validate sees no tie; plan warns of it in text, --verbose, markdown and json, and changes no exit code", async () => {
    const file = await work.write("ties.yaml", MANIFEST);
    const validated = await server.run(["validate", "-f", file]);
    expect(validated.code).toBe(0);
    expect(validated.stderr).not.toContain("order 1");

    const terse = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(terse.code, terse.stderr).toBe(0);
    expect(terse.stdout).toContain(
      "\n\nNo changes. The remote state matches the manifest.\n" +
        "Warning: 1 order tie that ignore_fields: [order] leaves between configs of the manifest: which of them runs first is not defined (the service lists them by plugin id).\n" +
        "  Run with --verbose for each tie and how to settle it.\n",
    );
    const verbose = await server.run(["plan", "-f", file, "--verbose"]);
    expect(verbose.stdout).toContain(`  ! order tie: ${TIE}\n`);

    const markdown = await server.run(["plan", "-f", file, "--format", "markdown"]);
    expect(markdown.stdout).toContain(
      "> 1 order tie that ignore&#95;fields: &#91;order&#93; leaves between configs of the manifest; apply is not refused.",
    );

    const json = await server.run(["plan", "-f", file, "--format", "json"]);
    const plan = JSON.parse(json.stdout) as Plan;
    expect(plan.families[0]?.orderTies).toEqual([
      {
        order: 1,
        managed: [
          { id: 100, name: "Alpha", plugin: 1, placed: "kept", source: expect.stringMatching(/:6$/) },
          { id: 101, name: "Beta", plugin: 2, placed: "ignored", source: expect.stringMatching(/:9$/) },
        ],
        unmanaged: [],
      },
    ]);
  });

  it("says nothing once the service holds them at distinct orders", async () => {
    const file = await work.write("apart.yaml", MANIFEST.replace("order: 1", "order: 3"));
    const plan = await server.run(["plan", "-f", file, "--verbose"]);
    expect(plan.stdout).toContain("Plan: 0 to create, 0 to update, 0 to delete, 1 to reorder.");
    expect(plan.stdout).not.toContain("order tie");
  });
});

describe("a partial plan with nothing to do", () => {
  // Alpha is as the manifest says; Gamma is not there yet: the full plan has a change.
  const MANIFEST = manifest(
    "version: 1",
    "projects:",
    '  "3":',
    "    plugin_configs:",
    "      configs:",
    ...config("Alpha", 1, 1),
    ...config("Beta", 2, 1),
    ...config("Gamma", 3, 2),
  );
  const FLAGS = [
    ["--target", "Alpha"],
    ["--exclude", "Gamma"],
    ["--target", "Al*", "--exclude", "Beta"],
  ];

  it.each(FLAGS)("plan %s %s: no changes in the targeted records, in text and markdown", async (...flags) => {
    const file = await work.write("partial.yaml", MANIFEST);
    const full = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(full.code).toBe(2);

    const text = await server.run(["plan", "-f", file, "--detailed-exitcode", ...flags]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^No changes in the targeted records\.\nPartial plan \(--/);
    const markdown = await server.run(["plan", "-f", file, "--format", "markdown", ...flags]);
    expect(markdown.stdout).toContain("**No changes in the targeted records.**");
    for (const output of [text.stdout, markdown.stdout]) expect(output).not.toContain("matches the manifest");

    const json = await server.run(["plan", "-f", file, "--format", "json", ...flags]);
    const plan = JSON.parse(json.stdout) as Plan;
    expect(plan.partial).toBe(true);
    expect(plan.summary).toEqual({ create: 0, update: 0, delete: 0, reorder: 0 });
  });

  it("apply --target with nothing to do says the same, and writes nothing", async () => {
    const file = await work.write("partial-apply.yaml", MANIFEST);
    const before = await server.list(3, PC);
    const applied = await server.run(["apply", "-f", file, "--auto-approve", "--target", "Alpha"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(
      /^No changes in the targeted records\.\nPartial plan \(--target "Alpha"\)/,
    );
    expect(applied.stdout).not.toContain("matches the manifest");
    expect(await server.list(3, PC)).toEqual(before);
    // Without a target, the same manifest is not done.
    const full = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(full.code).toBe(2);
  });

  it("a full plan with nothing to do still says the remote state matches the manifest", async () => {
    const file = await work.write("whole.yaml", MANIFEST.replace(/ {8}- name: Gamma[\s\S]*$/, ""));
    const plan = await server.run(["plan", "-f", file]);
    expect(plan.stdout).toBe("No changes. The remote state matches the manifest.\n");
  });
});
