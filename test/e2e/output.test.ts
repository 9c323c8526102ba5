// E2E: what plan, apply and export print (text, JSON, markdown, step summary, colour) and write.
// The plain text plan runs the built binary (runBuilt): results on its stdout, nothing on stderr.

import { existsSync } from "node:fs";
import { readFile, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/emulator/index.js";
import { dataWith } from "../support/emulator-data.js";
import { FE, PC } from "../support/families.js";
import { runCliInProcess } from "../support/in-process.js";
import { manifest } from "../support/manifest-text.js";
import { expectNoSecret } from "../support/output-checks.js";
import { EXAMPLES, REPOSITORY } from "../support/paths.js";
import { API_KEY, openServer, startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for ANSI escapes is the point
const ANSI = /\u001b\[/;

let dir: string;
let write: WriteFile;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ path: dir, write, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

describe.concurrent("plan output (read-only, one server)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer("seed");
  });
  afterAll(() => server.close());

  it("text: + create, ~ update with field: old → new, - delete and the reorder, each with file:line", async () => {
    const result = await server.runBuilt(["plan", "-f", EXAMPLES]);
    expect(result.code).toBe(0);
    const file = "examples/pcsync.yaml";
    expect(result.stdout).toContain(
      `project 1 / plugin_configs\n  + create "Taxonomy Standardizer"  # ${file}:22`,
    );
    expect(result.stdout).toContain(
      `  ~ update "Property Filter" (id 2)  # ${file}:15\n      enabled: false → true`,
    );
    expect(result.stdout).toContain(`  - delete "Legacy S3" (id 3)  # ${file}:10`);
    expect(result.stdout).toContain(`  ↕ reorder: "Property Filter" (id 2) 2 → 1  # ${file}:10`);
    expect(result.stdout).toMatch(/Plan: 8 to create, 1 to update, 1 to delete, 2 to reorder\.\n$/);
    // Results only on stdout; nothing on stderr when all is well and stderr is not a terminal.
    expect(result.stderr).toBe("");
  });

  it("--format json prints exactly one JSON document with the summary and sourced changes", async () => {
    const result = await server.run(["plan", "-f", EXAMPLES, "--format", "json"]);
    expect(result.code).toBe(0);
    const plan = JSON.parse(result.stdout) as {
      summary: unknown;
      changes: { action: string; project: string; family: string; name: string; source: string }[];
    };
    expect(plan.summary).toEqual({ create: 8, update: 1, delete: 1, reorder: 2 });
    expect(plan.changes).toContainEqual(
      expect.objectContaining({
        action: "delete",
        project: "1",
        family: PC,
        name: "Legacy S3",
        id: 3,
        source: "examples/pcsync.yaml:10",
      }),
    );
    expectNoSecret(result, API_KEY);
  });

  it("--format markdown has the summary table and collapsed details", async () => {
    const result = await server.run(["plan", "-f", EXAMPLES, "--format", "markdown"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("| Project | Family | Create | Update | Delete | Reorder |");
    expect(result.stdout).toContain(`| 1 | ${PC} | 1 | 1 | 1 | 2 |`);
    expect(result.stdout).toContain("| **Total** | | **8** | **1** | **1** | **2** |");
    expect(result.stdout).toContain("<details><summary>project 1 / plugin_configs");
    expect(result.stdout).not.toMatch(ANSI);
  });

  it("keeps the markdown plan under 60,000 characters however big the plan", async () => {
    const configs = Array.from(
      { length: 1500 },
      (_, index) =>
        `        - { name: Generated config number ${index} with a long name, plugin: 1, enabled: true, description: ${"x".repeat(60)} }`,
    );
    const file = await write(
      "huge.yaml",
      manifest("version: 1", "projects:", '  "3":', "    plugin_configs:", "      configs:", ...configs),
    );
    const result = await server.run(["plan", "-f", file, "--format", "markdown"]);
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBeLessThan(60_000);
    expect(result.stdout).toContain("| **Total** | | **1500** | **0** | **0** | **0** |");
  });

  it("with GITHUB_ACTIONS=true, appends the markdown plan to $GITHUB_STEP_SUMMARY", async () => {
    const summary = join(dir, "step-summary.md");
    await writeFile(summary, "# Earlier step\n");
    const env = { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary };
    const result = await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"], { env });
    expect(result.code).toBe(2);
    // The summary is extra: stdout keeps the requested (text) format.
    expect(result.stdout).toContain("+ create");
    const written = await readFile(summary, "utf8");
    expect(written.startsWith("# Earlier step\n")).toBe(true);
    expect(written).toContain("| Project | Family | Create | Update | Delete | Reorder |");
    expect(written).toContain("**Plan: 8 to create, 1 to update, 1 to delete, 2 to reorder.**");

    const outside = await server.run(["plan", "-f", EXAMPLES], { env: { GITHUB_STEP_SUMMARY: summary } });
    expect(outside.code).toBe(0);
    expect(await readFile(summary, "utf8")).toBe(written);
  });

  it("a step summary that cannot be written is a warning: the plan and its exit code stand", async () => {
    const summary = join(dir, "missing-directory", "summary.md");
    const env = { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary };
    const result = await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `warning: could not append the plan to $GITHUB_STEP_SUMMARY (${summary}): the directory ${join(dir, "missing-directory")} does not exist; create it or choose another path\n`,
    );
  });

  it("plan --out and export -o into a missing directory fail with one line naming the path", async () => {
    const target = join(dir, "missing-directory", "plan.json");
    const plan = await server.run(["plan", "-f", EXAMPLES, "--out", target]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toBe(
      `pcsync: cannot write ${target}: the directory ${join(dir, "missing-directory")} does not exist; create it or choose another path\n`,
    );
    const exported = await server.run(["export", "--project", "1", "-o", dir]);
    expect(exported.code).toBe(1);
    expect(exported.stderr).toBe(`pcsync: cannot write ${dir}: it is a directory; give a file name\n`);
  });

  it("-o never replaces a device nor an input: /dev/full fails, the manifest and var file stay", async () => {
    const small = `${EXAMPLES}/small/pcsync.yaml`;
    const full = await server.run(["plan", "-f", small, "-o", "/dev/full"]);
    expect([full.code, full.stderr]).toEqual([
      1,
      "pcsync: cannot write /dev/full: no space left on the device\n",
    ]);
    expect((await stat("/dev/full")).isCharacterDevice()).toBe(true);
    const devNull = await server.run(["plan", "-f", small, "-o", "/dev/null"]);
    expect([devNull.code, devNull.stderr]).toEqual([
      0,
      "Wrote the plan to /dev/null (a character device); to apply it later, save it to a file with -o FILE\n",
    ]);
    const manifestFile = await write("own-input.yaml", await readFile(small, "utf8"));
    const before = await readFile(manifestFile, "utf8");
    // Another spelling of the same file: compared by device and inode, not by path text.
    const spelled = `${dir}/../${basename(dir)}/${basename(manifestFile)}`;
    const over = await server.run(["plan", "-f", manifestFile, "-o", spelled]);
    expect([over.code, over.stderr]).toEqual([
      1,
      `pcsync: cannot write ${spelled}: it is a manifest (-f) (${manifestFile}), which this run reads; the output would replace it: give another path for the output\n`,
    ]);
    const vars = await write("own-vars.yaml", "PROJECT_ID: 1\n");
    const exported = await server.run(["export", "--project", "1", "--var-file", vars, "-o", vars]);
    expect(exported.code).toBe(1);
    expect(exported.stderr).toContain("it is a var file (--var-file)");
    expect([await readFile(manifestFile, "utf8"), await readFile(vars, "utf8")]).toEqual([
      before,
      "PROJECT_ID: 1\n",
    ]);
  });

  it("with GITHUB_ACTIONS=true, manifest errors are also ::error annotations", async () => {
    const file = await write(
      "annotated.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { plugin: 1 }",
      ),
    );
    const result = await server.run(["plan", "-f", file], { env: { GITHUB_ACTIONS: "true" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`::error file=${file},line=6,col=\\d+::`));
  });

  it("NO_COLOR wins over FORCE_COLOR; FORCE_COLOR colours a pipe", async () => {
    const plain = await server.run(["plan", "-f", EXAMPLES], { env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
    expect(plain.stdout).not.toMatch(ANSI);
    expect(plain.stderr).not.toMatch(ANSI);
    const coloured = await server.run(["plan", "-f", EXAMPLES], {
      env: { NO_COLOR: undefined, FORCE_COLOR: "1" },
    });
    expect(coloured.stdout).toMatch(ANSI);
    const piped = await server.run(["plan", "-f", EXAMPLES], { env: { NO_COLOR: undefined } });
    expect(piped.stdout).not.toMatch(ANSI);
  });

  it("--verbose traces requests on stderr, never the key, and leaves stdout as it was", async () => {
    const quiet = await server.run(["plan", "-f", EXAMPLES, "--format", "json"]);
    const verbose = await server.run(["plan", "-f", EXAMPLES, "--format", "json", "--verbose"]);
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toBe(quiet.stdout);
    expect(verbose.stderr).toMatch(/GET \/api\/projects\/1\/plugin_configs\/.* -> 200/);
    expectNoSecret(verbose, API_KEY);
  });
});

describe("- as an output path", () => {
  it("is stdout for export -o; every other output refuses it, writes no file named - and changes nothing", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const work = await temporaryDirectory();
    onTestFinished(() => work.remove());
    const small = `${EXAMPLES}/small/pcsync.yaml`;
    const exported = await server.run(["export", "--project", "1", "-o", "-"], { cwd: work.path });
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain("version: 1");
    const refusal = "pcsync: cannot write -: - is not standard output here";
    for (const args of [
      ["plan", "-f", small, "-o", "-"],
      // The examples have changes to write: the journal is opened before the first of them.
      ["apply", "-f", EXAMPLES, "--auto-approve", "--journal", "-"],
    ]) {
      const run = await server.run(args, { cwd: work.path });
      expect([run.code, run.stderr], args.join(" ")).toEqual([1, expect.stringContaining(refusal)]);
    }
    // watch refuses it before its first cycle, as plan refuses -o.
    const watched = await server.run(["watch", "-f", small, "--once", "--metrics-file", "-"], {
      cwd: work.path,
    });
    expect([watched.code, watched.stderr]).toEqual([
      1,
      expect.stringMatching(/^pcsync: cannot write - \(--metrics-file\): - is not standard output here/),
    ]);
    expect(existsSync(join(work.path, "-"))).toBe(false);
    expect(server.emulator.requestLog.filter((entry) => entry.method !== "GET")).toEqual([]);
  });
});

describe.concurrent("apply output", () => {
  it("--format json prints one JSON document: the plan and what was done", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["apply", "--auto-approve", "-f", EXAMPLES, "--format", "json"]);
    expect(result.code).toBe(0);
    const document = JSON.parse(result.stdout) as {
      plan: { summary: unknown };
      result: { done: number; failed: number; skipped: number; outcomes: { status: string }[] };
    };
    expect(document.plan.summary).toEqual({ create: 8, update: 1, delete: 1, reorder: 2 });
    expect(document.result).toMatchObject({ done: 11, failed: 0, skipped: 0 });
    expect(document.result.outcomes.every((outcome) => outcome.status === "done")).toBe(true);
  });

  it("--format json on a partial failure is still one document, with the failure and its reason", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = await write(
      "bad-plugin.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1, enabled: false }",
        "        - { name: Ghost, plugin: 999 }",
      ),
    );
    const result = await server.run(["apply", "--auto-approve", "-f", file, "--format", "json"]);
    expect(result.code).toBe(1);
    const document = JSON.parse(result.stdout) as { result: { outcomes: Record<string, unknown>[] } };
    expect(document.result.outcomes).toContainEqual(
      expect.objectContaining({
        action: "create",
        name: "Ghost",
        status: "failed",
        source: `${file}:7`,
        message: expect.stringContaining('Invalid pk "999"'),
      }),
    );
    expect(document.result.outcomes).toContainEqual(
      expect.objectContaining({ action: "update", name: "GeoIP", status: "done", id: 5 }),
    );
    expect(result.stderr).toContain("apply incomplete");
  });

  it("--format markdown and the step summary report an apply", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const summary = join(dir, "apply-summary.md");
    const result = await server.run(
      ["apply", "--auto-approve", "-f", EXAMPLES, "--project", "2", "--format", "markdown"],
      {
        env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary },
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("| Project | Family | Create | Update | Delete | Reorder |");
    expect(await readFile(summary, "utf8")).toContain("pcsync apply");
    // The lines after the document do not run on into its last paragraph or details block.
    expect(result.stdout).toMatch(/<\/details>\n\n/);
    expect(result.stdout).not.toMatch(/<\/details>\n[^\n]/);
    // Nothing left to do: the "no changes" paragraph and what follows stay apart as well.
    const journal = /Journal: (\S+)/.exec(result.stdout + result.stderr)?.[1] ?? "";
    for (const _ of ["undone", "nothing left to undo"]) {
      const rollback = await server.run([
        "rollback",
        "--auto-approve",
        "--journal",
        journal,
        "--format",
        "markdown",
      ]);
      expect(rollback.code).toBe(0);
      expect(rollback.stdout).not.toMatch(/(<\/details>|\*\*)\n[^\n]/);
    }
  });
});

describe.concurrent.each<ProfileName>(["seed", "posthog-2024"])("export on %s", (profile) => {
  let server: TestServer;
  beforeAll(async () => {
    const data = dataWith([
      { id: 30, project: 1, family: PC, plugin: 4, order: 7, name: "Customer.io Export", description: "CRM" },
      { id: 31, project: 1, family: PC, plugin: 6, order: 9, name: "Warehouse", enabled: false },
      { id: 32, project: 1, family: PC, plugin: 6, order: 12, name: "Warehouse" },
      { id: 33, project: 1, family: FE, plugin: 41, order: 3, name: "Pineapple Mode" },
      { id: 34, project: 4, family: PC, plugin: 8, order: 1, name: null },
    ]);
    data.projects.push({ id: 4, name: "Unnamed" });
    server = await startServer(profile, { data });
    // Some history first, so the export has more than the example data to show.
    expect(
      (await server.run(["apply", "--auto-approve", "-f", EXAMPLES, "--project", "2", "--project", "3"]))
        .code,
    ).toBe(0);
  });
  afterAll(() => server.close());

  it("export --project writes a manifest that validates and plans back to no changes", async () => {
    const files: string[] = [];
    for (const project of ["1", "3"]) {
      const exported = await server.run(["export", "--project", project]);
      expect(exported.code).toBe(0);
      files.push(await write(`export-${profile}-${project}.yaml`, exported.stdout));
    }
    const args = files.flatMap((file) => ["-f", file]);
    const valid = await server.run(["validate", ...args]);
    expect(valid.stdout).toMatch(/^ok: 2 projects/);
    expect(valid.code).toBe(0);
    const plan = await server.run(["plan", ...args, "--detailed-exitcode"]);
    expect(plan.stdout).toContain("No changes.");
    expect(plan.code).toBe(0);
  });

  it("of records sharing a name, exports the lowest id pinned and says the others are left alone", async () => {
    const exported = await server.run(["export", "--project", "1"]);
    expect(exported.stderr).toContain('2 records in plugin_configs are named "Warehouse" (ids 31, 32)');
    expect(exported.stderr).toContain("the others are left alone");
    expect(exported.stdout).toMatch(/- name: Warehouse\n\s+id: 31\n/);
    expect(exported.stdout).not.toContain("id: 32");
  });

  it("names an unnamed record after its plugin and id (seed), and says planning will set that name", async () => {
    const exported = await server.run(["export", "--project", "4"]);
    expect(exported.code).toBe(0);
    const file = await write(`unnamed-${profile}.yaml`, exported.stdout);
    const plan = await server.run(["plan", "-f", file, "--format", "json"]);
    const changes = (JSON.parse(plan.stdout) as { changes: unknown[] }).changes;
    if (profile === "seed") {
      expect(exported.stderr).toContain(
        'record 34 in plugin_configs has no name; exported as "Unduplicator (config 34)"',
      );
      expect(changes).toEqual([
        expect.objectContaining({
          action: "update",
          id: 34,
          fields: { name: { from: null, to: "Unduplicator (config 34)" } },
        }),
      ]);
    } else {
      // posthog-2024 shows the plugin's name where the record has none: nothing to rename.
      expect(exported.stdout).toContain("name: Unduplicator\n");
      expect(changes).toEqual([]);
    }
  });

  it("-o FILE writes the file, not stdout", async () => {
    const file = join(dir, `written-${profile}.yaml`);
    const result = await server.run(["export", "--project", "1", "-o", file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(file);
    const written = await readFile(file, "utf8");
    expect(written).toContain('"1":');
    expect(written).toContain("name: Pineapple Mode");
    // A description someone set is kept; the plugin's own (shown by posthog-2024 for none) is not.
    expect(written).toContain("description: CRM");
    expect(written).not.toContain("Enrich events with the location of their IP address.");
    expect((await server.run(["plan", "-f", file, "--detailed-exitcode"])).code).toBe(0);
  });

  it("--family exports only that family, never the other family's records", async () => {
    const result = await server.run(["export", "--project", "1", "--family", PC]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(FE);
    expect(result.stdout).not.toContain("Notification Bar");
    expect(result.stdout).not.toContain("Pineapple Mode");
    const file = await write(`family-${profile}.yaml`, result.stdout);
    expect((await server.run(["plan", "-f", file, "--detailed-exitcode"])).code).toBe(0);
  });
});

describe.concurrent("export usage", () => {
  it("an unknown family is a usage error (exit 1)", async () => {
    const result = await runCliInProcess(["export", "--project", "1", "--family", "frontend"], {
      env: { PCSYNC_BASE_URL: "http://127.0.0.1:9", PCSYNC_API_KEY: API_KEY },
      cwd: REPOSITORY,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('unknown family "frontend"');
  });
});
