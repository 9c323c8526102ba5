// The published schema helps editors (a description on every property) and the examples are
// valid manifests that point editors at it.

import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifests } from "../../src/manifest/index.js";

const root = new URL("../../", import.meta.url);
const cwd = fileURLToPath(root);

type Schema = { [keyword: string]: unknown };

function* propertiesOf(schema: Schema, path: string): Generator<[string, Schema]> {
  for (const [name, value] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    yield [`${path}.${name}`, value];
  }
  for (const [name, value] of Object.entries((schema.definitions ?? {}) as Record<string, Schema>)) {
    yield [`${path}#${name}`, value];
    yield* propertiesOf(value, `${path}#${name}`);
  }
}

describe("manifest schema", () => {
  it("describes every property and definition", async () => {
    const schema = JSON.parse(
      await readFile(new URL("schemas/manifest.schema.json", root), "utf8"),
    ) as Schema;
    const undescribed = [...propertiesOf(schema, "")]
      .filter(([, value]) => typeof value.description !== "string" || value.description === "")
      .map(([path]) => path);
    expect(undescribed).toEqual([]);
  });
});

describe("examples", () => {
  it("examples/*.yaml together are one valid desired state with three projects and both families", async () => {
    const result = await loadManifests(["examples"], { env: {}, cwd });
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(result.warnings.map(formatDiagnostic)).toEqual([]);
    const families = result.value?.families.map((family) => `${family.project}/${family.family}`);
    expect(families).toEqual([
      "1/plugin_configs",
      "1/pipeline_frontend_apps_configs",
      "2/plugin_configs",
      "2/pipeline_frontend_apps_configs",
      "3/plugin_configs",
      "3/pipeline_frontend_apps_configs",
    ]);
    const web = result.value?.families[0];
    expect(web?.prune).toBe(true);
    expect(web?.configs.map((config) => config.fields.name)).not.toContain("Legacy S3");
  });

  it("the small example is valid on its own", async () => {
    const result = await loadManifests(["examples/small"], { env: {}, cwd });
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(result.value?.families).toHaveLength(1);
  });

  it("every example points editors at the schema by a relative path", async () => {
    const files = ["examples/small/pcsync.yaml"];
    for (const name of await readdir(new URL("examples/", root))) {
      if (name.endsWith(".yaml") || name.endsWith(".yml")) files.push(`examples/${name}`);
    }
    for (const file of files) {
      const firstLine = (await readFile(new URL(file, root), "utf8")).split("\n")[0] ?? "";
      const match = /^# yaml-language-server: \$schema=(\S+)$/.exec(firstLine);
      expect(match, file).not.toBeNull();
      const schemaUrl = new URL(match?.[1] ?? "", new URL(file, root));
      expect(schemaUrl.href).toBe(new URL("schemas/manifest.schema.json", root).href);
    }
  });
});
