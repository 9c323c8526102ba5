// E2E: the exit codes users script against (0, 1, 2, 3), the safety guards, and --project/--family.
// One case of each code runs the built binary (runBuilt): the code is the process's exit status.

import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataWith } from "../support/emulator-data.js";
import { FE, PC } from "../support/families.js";
import { manifest } from "../support/manifest-text.js";
import { expectNoSecret, hasStackTrace } from "../support/output-checks.js";
import { EXAMPLES } from "../support/paths.js";
import { API_KEY, openServer, startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WriteFile } from "../support/work-dir.js";

let write: WriteFile;
let removeWorkDir: () => Promise<void>;
beforeAll(async () => {
  ({ write, remove: removeWorkDir } = await temporaryDirectory());
});
afterAll(() => removeWorkDir());

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe.concurrent("plan --detailed-exitcode", () => {
  it("exits 0 when the remote state already matches", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.runBuilt(["plan", "-f", `${EXAMPLES}/small`, "--detailed-exitcode"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("No changes.");
  });

  it("exits 2 when changes are pending, and changes nothing", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const before = server.emulator.snapshot().records;
    const result = await server.runBuilt(["plan", "-f", EXAMPLES, "--detailed-exitcode"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Plan: 8 to create, 1 to update, 1 to delete, 2 to reorder.");
    expect(server.emulator.snapshot().records).toEqual(before);
    expect(server.emulator.requestLog.every((entry) => entry.method === "GET")).toBe(true);
  });

  it("without the flag, exits 0 even when changes are pending", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["plan", "-f", EXAMPLES]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("to create");
  });

  it("exits 1 on an invalid manifest, naming file:line:col, without calling the server", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = await write(
      "invalid.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
        "          enabeld: true",
      ),
    );
    const result = await server.runBuilt(["plan", "-f", file, "--detailed-exitcode"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${file}:8:11: unknown key "enabeld"; did you mean "enabled"?`);
    expect(server.emulator.requestLog).toEqual([]);
  });

  it("exits 1 when @current is a project the manifest also names by id, and accepts it alone", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const family = (project: string, name: string) => [
      `  "${project}":`,
      "    plugin_configs:",
      "      prune: true",
      "      configs:",
      `        - name: ${name}`,
      "          plugin: 1",
    ];
    const both = await write(
      "current-twice.yaml",
      manifest("version: 1", "projects:", ...family("@current", "GeoIP"), ...family("1", "Other")),
    );
    const twice = await server.run(["apply", "--auto-approve", "-f", both]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(
      `${both}:4: project "@current" is project 1 for this API key, which the manifest also defines at ${both}:10; keep one of the two`,
    );
    expect(server.emulator.requestLog.every((entry) => entry.method === "GET")).toBe(true);

    const alongside = await write(
      "current-and-other.yaml",
      manifest("version: 1", "projects:", ...family("@current", "GeoIP"), ...family("2", "Added")),
    );
    const planned = await server.run(["plan", "-f", alongside]);
    expect(planned.stderr).toBe("");
    expect(planned.code).toBe(0);
    expect(planned.stdout).toContain("project @current / plugin_configs");
    expect(planned.stdout).toContain("project 2 / plugin_configs");
  });

  it("exits 1 when the server cannot be reached, saying which URL and what to check", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const url = `http://127.0.0.1:${await closedPort()}`;
    // The client's retries of a refused connection, every one of its durations a tenth as long
    // (PCSYNC_TIME_SCALE keeps their proportions): 12 s of backoff otherwise.
    const result = await server.run(["plan", "-f", `${EXAMPLES}/small`, "--detailed-exitcode"], {
      env: { PCSYNC_BASE_URL: url, PCSYNC_TIME_SCALE: "0.1" },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`could not reach ${url}`);
    expect(result.stderr).toContain("check the base URL");
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it("exits 1 on a wrong API key (401), saying what the server answered, never printing a key", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["plan", "-f", `${EXAMPLES}/small`, "--detailed-exitcode"], {
      env: { PCSYNC_API_KEY: "phx_not_a_valid_key_000000000000" },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("401");
    expect(result.stderr).toContain("Personal API key found in request Authorization header is invalid.");
    expect(result.stderr).not.toContain("phx_not_a_valid_key");
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it("exits 1 when the key may not see a project, naming it and what to do", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", {
      key: { scopes: ["plugin:read"], projects: [1] },
    });
    const result = await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("403");
    expect(result.stderr).toMatch(/API key does not have access to the requested project '[23]'/);
    expect(result.stderr).toContain("use a key that has it");
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it("exits 1 when no API key is given, saying how to give one", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["plan", "-f", `${EXAMPLES}/small`], { env: { PCSYNC_API_KEY: "" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PCSYNC_API_KEY/);
    expect(result.stderr).toMatch(/--api-key-file/);
    expect(server.emulator.requestLog).toEqual([]);
  });

  it("exits 1 when two remote records share a name the manifest uses, naming both ids", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed", {
      data: dataWith([{ id: 50, project: 2, family: PC, plugin: 1, order: 2, name: "GeoIP" }]),
    });
    const file = await write(
      "twins.yaml",
      manifest(
        "version: 1",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      configs:",
        "        - name: GeoIP",
        "          plugin: 1",
      ),
    );
    const result = await server.run(["plan", "-f", file, "--detailed-exitcode"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${file}:6`);
    expect(result.stderr).toMatch(/ids 5, 50/);
    expect(result.stderr).toContain("id:");
  });
});

describe.concurrent("apply", () => {
  it("exits 0 once everything is applied, and a fresh plan then exits 0", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const applied = await server.run(["apply", "--auto-approve", "-f", EXAMPLES]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("Apply complete: 8 created, 1 updated, 1 deleted, 2 reordered.");
    const again = await server.run(["plan", "-f", EXAMPLES, "--detailed-exitcode"]);
    expect(again.code).toBe(0);
  });

  it("--dry-run prints the plan, exits 0 and changes nothing", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["apply", "-f", EXAMPLES, "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Plan: 8 to create");
    expect(result.stdout).not.toContain("Apply complete");
    expect(server.emulator.requestLog.every((entry) => entry.method === "GET")).toBe(true);
  });

  it("leaves unmanaged records alone and reports them", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const before = await server.list(1, PC);
    const result = await server.run(["apply", "--auto-approve", "-f", `${EXAMPLES}/small`]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /unmanaged: 2 records left alone: "Property Filter" \(id 2\), "Legacy S3" \(id 3\)/,
    );
    expect(await server.list(1, PC)).toEqual(before);
  });
});

describe.concurrent("safety guards (exit 3)", () => {
  // Project 1's plugin_configs holds 3 example records; 7 more make a family of 10.
  const tenRecords = () =>
    dataWith(
      Array.from({ length: 7 }, (_, index) => ({
        project: 1,
        family: PC,
        plugin: 4,
        order: 4 + index,
        name: `Extra ${index + 1}`,
      })),
    );
  // Keeps GeoIP, Property Filter, Legacy S3 and the first `extras` extras; prunes the rest.
  const keep = (extras: number) =>
    write(
      `keep-${extras}.yaml`,
      manifest(
        "version: 1",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      prune: true",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
        "        - { name: Property Filter, plugin: 2 }",
        "        - { name: Legacy S3, plugin: 5 }",
        ...Array.from({ length: extras }, (_, index) => `        - { name: Extra ${index + 1}, plugin: 4 }`),
      ),
    );

  it("refuses to prune more than 30% of a family of 10 or more, and changes nothing", async ({
    onTestFinished,
  }) => {
    const server = await openServer(onTestFinished, "seed", { data: tenRecords() });
    const file = await keep(3); // deletes 4 of 10
    const before = server.emulator.snapshot().records;
    const result = await server.runBuilt(["apply", "--auto-approve", "-f", file]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("prune would delete 4 of 10 records (40%, more than 30%)");
    expect(result.stderr).toContain("--max-delete-percent");
    expect(result.stderr).toContain("--force");
    expect(result.stderr).toContain("Nothing was changed.");
    expect(server.emulator.snapshot().records).toEqual(before);
    expect(server.emulator.requestLog.every((entry) => entry.method === "GET")).toBe(true);
  });

  it("allows exactly 30%", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: tenRecords() });
    const result = await server.run(["apply", "--auto-approve", "-f", await keep(4)]); // deletes 3 of 10
    expect(result.code).toBe(0);
    expect(await server.list(1, PC)).toHaveLength(7);
  });

  it("--max-delete-percent raises the limit", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: tenRecords() });
    const result = await server.run([
      "apply",
      "--auto-approve",
      "-f",
      await keep(3),
      "--max-delete-percent",
      "40",
    ]);
    expect(result.code).toBe(0);
    expect(await server.list(1, PC)).toHaveLength(6);
  });

  it("--force overrides it", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: tenRecords() });
    const result = await server.run(["apply", "--auto-approve", "-f", await keep(0), "--force"]); // deletes 7 of 10
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("--force overrides");
    // Nothing printed tells a user who gave --force to give it, or that apply will refuse.
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/use --force|apply will refuse/i);
    expect((await server.list(1, PC)).map((record) => record.name)).toEqual([
      "GeoIP",
      "Property Filter",
      "Legacy S3",
    ]);
  });

  it("plan shows the guard as a warning and still exits 2", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed", { data: tenRecords() });
    const result = await server.run(["plan", "-f", await keep(3), "--detailed-exitcode"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("apply will refuse");
  });

  it("refuses to prune a non-empty family to nothing; --force overrides", async ({ onTestFinished }) => {
    const server = await openServer(onTestFinished, "seed");
    const file = await write(
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
    const refused = await server.run(["apply", "--auto-approve", "-f", file]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("project 2 plugin_configs: prune would delete the only record");
    expect(await server.list(2, PC)).toHaveLength(1);

    const forced = await server.run(["apply", "--auto-approve", "-f", file, "--force"]);
    expect(forced.code).toBe(0);
    expect(await server.list(2, PC)).toEqual([]);
  });
});

describe.concurrent("--project and --family", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer("seed");
  });
  afterAll(() => server.close());

  it("--project plans only that project, and reads only its lists", async ({ onTestFinished }) => {
    // A server of its own: its request log must hold this run's requests only.
    const server = await openServer(onTestFinished, "seed");
    const result = await server.run(["plan", "-f", EXAMPLES, "--project", "2"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("project 2 / plugin_configs");
    expect(result.stdout).not.toMatch(/project [13] \//);
    expect(server.emulator.requestLog.length).toBeGreaterThan(0);
    expect(server.emulator.requestLog.every((entry) => entry.path.startsWith("/api/projects/2/"))).toBe(true);
  });

  it("--family plans only that family", async () => {
    const result = await server.run([
      "plan",
      "-f",
      EXAMPLES,
      "--family",
      FE,
      "--project",
      "1",
      "--project",
      "3",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`project 1 / ${FE}`);
    expect(result.stdout).toContain(`project 3 / ${FE}`);
    expect(result.stdout).not.toContain(`/ ${PC}`);
    expect(result.stdout).not.toContain("project 2");
  });

  it("apply --project touches nothing outside the project", async ({ onTestFinished }) => {
    const fresh = await openServer(onTestFinished, "seed");
    const project1 = await fresh.list(1, PC);
    const result = await fresh.run(["apply", "--auto-approve", "-f", EXAMPLES, "--project", "2"]);
    expect(result.code).toBe(0);
    expect(await fresh.list(1, PC)).toEqual(project1);
    expect(await fresh.list(3, PC)).toEqual([]);
    expect((await fresh.list(2, FE)).map((record) => record.name)).toEqual(["Early Access Features"]);
  });

  it("an unknown family is a usage error (exit 1) naming the valid ones", async () => {
    const result = await server.run(["plan", "-f", EXAMPLES, "--family", "plugin_config"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('unknown family "plugin_config"');
    expect(result.stderr).toContain(`${PC}, ${FE}`);
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it("a --family the manifest does not manage is a usage error, not a silent 'No changes'", async () => {
    const result = await server.run([
      "plan",
      "-f",
      `${EXAMPLES}/small`,
      "--family",
      FE,
      "--detailed-exitcode",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`--family ${FE} selects nothing: the manifest manages only ${PC}`);
  });

  it("a project not in the manifest is a usage error (exit 1) naming the ones it has", async () => {
    const result = await server.run(["apply", "--auto-approve", "-f", EXAMPLES, "--project", "9"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--project 9: not in the manifest (it has 1, 2, 3)");
  });

  it("bad option values are usage errors (exit 1)", async () => {
    const format = await server.run(["plan", "-f", EXAMPLES, "--format", "yaml"]);
    expect(format.code).toBe(1);
    expect(format.stderr).toContain("text, json, markdown");
    const percent = await server.run([
      "apply",
      "--auto-approve",
      "-f",
      EXAMPLES,
      "--max-delete-percent",
      "lots",
    ]);
    expect(percent.code).toBe(1);
    expect(percent.stderr).toContain('--max-delete-percent must be a number > 0, not "lots"');
    expectNoSecret(percent, API_KEY);
  });
});
