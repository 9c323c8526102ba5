// Large manifests: a generated fleet manifest loads whole, and only a file past the per-file cap (a
// parameter, so the boundary is tested with a small one) is refused, saying its size, the cap and
// what to do.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifests, NO_VARIABLES } from "../../src/manifest/index.js";
import { parseYaml } from "../../src/manifest/load-yaml.js";
import { PlainBuilder } from "../../src/manifest/plain-manifest.js";
import { DEFAULT_READ_LIMITS, readManifestSources, readVarFiles } from "../../src/manifest/read-files.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

let work: WorkDir;
beforeAll(async () => {
  work = await temporaryDirectory();
});
afterAll(() => work.remove());

/** `projects` projects of `perProject` configs each, written out in block style. */
function fleetManifest(projects: number, perProject: number): string {
  const lines = ["version: 1", "projects:"];
  for (let project = 1; project <= projects; project++) {
    lines.push(`  "${project}":`, "    plugin_configs:", "      configs:");
    for (let config = 1; config <= perProject; config++) {
      lines.push(
        `        - name: Config ${String(config).padStart(5, "0")}`,
        `          plugin: ${(config % 8) + 1}`,
        "          enabled: true",
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

describe("large manifests", () => {
  it("caps one manifest file at 64 MiB, and a var file at 1 MiB", () => {
    expect(DEFAULT_READ_LIMITS.maxFileBytes).toBe(64 * 1024 * 1024);
    expect(DEFAULT_READ_LIMITS.maxVarFileBytes).toBe(1024 * 1024);
  });

  it("loads a 1.4 MB manifest of 20,000 configs whole", async () => {
    const text = fleetManifest(200, 100);
    expect(text.length).toBeGreaterThan(1_400_000);
    const file = await work.write("fleet.yaml", text);
    const result = await loadManifests([file], { env: {}, cwd: work.path });
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(result.value?.families).toHaveLength(200);
    const configs = result.value?.families.reduce((total, family) => total + family.configs.length, 0);
    expect(configs).toBe(20_000);
    const last = result.value?.families.at(-1)?.configs.at(-1);
    expect(last?.fields).toMatchObject({ name: "Config 00100", order: 100 });
    expect(last?.source.line).toBe(text.split("\n").length - 3);
  });

  it("reads a file of exactly the cap, and refuses one byte more naming its size, the cap and the remedy", async () => {
    const limits = { ...DEFAULT_READ_LIMITS, maxFileBytes: 2048 };
    const fits = await work.write("fits.yaml", `version: 1\n#${"x".repeat(2048 - 13)}\n`);
    const over = await work.write("over.yaml", `version: 1\n#${"x".repeat(2048 - 12)}\n`);
    const read = await readManifestSources([fits, over], work.path, limits);
    expect(read.sources.map((source) => source.text.length)).toEqual([2048]);
    expect(read.errors.map(formatDiagnostic)).toEqual([
      `${over.slice(work.path.length + 1)}: file is 2049 bytes, over the 2 KiB limit for one manifest file; split it into several files (by project: a project's families may sit in different files) and pass them all with -f, or a directory of them`,
    ]);
  });

  it("keeps a var file's own cap, also for a pipe or device that never ends", async () => {
    const limits = { ...DEFAULT_READ_LIMITS, maxFileBytes: 64 * 1024 * 1024, maxVarFileBytes: 1024 };
    const small = await work.write("small.vars.yaml", `NAME: ${"x".repeat(1024 - 7)}\n`);
    const big = await work.write("big.vars.yaml", `NAME: ${"x".repeat(1024 - 6)}\n`);
    const read = await readVarFiles([small, big, "/dev/zero"], work.path, limits);
    expect(read.sources).toHaveLength(1);
    expect(read.errors.map(formatDiagnostic)).toEqual([
      `${big.slice(work.path.length + 1)}: file is over the 1 KiB limit for a var file; a var file holds \`NAME: value\` lines: keep large data out of it`,
      "/dev/zero: file is over the 1 KiB limit for a var file; a var file holds `NAME: value` lines: keep large data out of it",
    ]);
  });

  it("lets a large manifest use an alias in every config: the alias budget grows with the text", () => {
    // 12,000 aliases of one value: more than the fixed budget of 10,000, far less than the text.
    const text = `shared: &shared Adds the country\nvalues: [${Array(12_000).fill("*shared").join(", ")}]\n`;
    const parsed = parseYaml(text, () => new PlainBuilder(text, NO_VARIABLES));
    expect(parsed.errors).toEqual([]);
    const { plain } = parsed.built.finish(parsed.positionAt);
    expect((plain?.value as { values: unknown[] } | undefined)?.values).toHaveLength(12_000);
  });
});
