// Loading valid manifests: the desired state the planner gets (orders, fields, positions,
// interpolation typed by the schema) and how files and directories merge.

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatDiagnostic,
  loadManifestSources,
  loadManifests,
  variablesFromEnvironment,
} from "../../src/manifest/index.js";

/** Loads one manifest text; `variables` are given to it as PCSYNC_VAR_NAME in the environment. */
function load(text: string, variables: Record<string, string> = {}) {
  const env = Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [`PCSYNC_VAR_${name}`, value]),
  );
  const result = loadManifestSources([{ file: "m.yaml", text }], variablesFromEnvironment(env));
  expect(result.errors.map(formatDiagnostic)).toEqual([]);
  if (result.value === undefined) throw new Error("no desired state");
  return result.value;
}

describe("desired state of one file", () => {
  it("resolves positional orders, keeps only the fields given, and records positions", () => {
    const state = load(`version: 1
projects:
  "1":
    plugin_configs:
      prune: true
      configs:
        - name: GeoIP
          plugin: 1
        - name: Filter
          plugin: 2
          enabled: false
          description: null
          match_action: 5
          id: 12
`);
    expect(state.baseUrl).toBeUndefined();
    expect(state.families).toHaveLength(1);
    const [family] = state.families;
    expect(family).toMatchObject({
      project: "1",
      family: "plugin_configs",
      prune: true,
      explicitOrder: false,
      source: { file: "m.yaml", line: 4, col: 5 },
    });
    expect(family?.configs.map((config) => config.fields)).toEqual([
      { plugin: 1, name: "GeoIP", order: 1 },
      { plugin: 2, name: "Filter", order: 2, enabled: false, description: null, match_action: 5 },
    ]);
    const filter = family?.configs[1];
    expect(filter?.id).toBe(12);
    expect(filter?.source).toEqual({ file: "m.yaml", line: 9, col: 11 });
    expect(filter?.fieldSources.enabled).toEqual({ file: "m.yaml", line: 11, col: 20 });
    expect(filter?.fieldSources.order).toBeUndefined();
    expect(family?.configs[0]?.id).toBeUndefined();
  });

  it("uses explicit orders when every config gives one", () => {
    const state = load(`version: 1
projects:
  "1":
    pipeline_frontend_apps_configs:
      configs:
        - {name: B, plugin: 41, order: 5}
        - {name: A, plugin: 40, order: 0}
`);
    const family = state.families[0];
    expect(family?.explicitOrder).toBe(true);
    expect(family?.prune).toBe(false);
    expect(family?.configs.map((config) => [config.fields.name, config.fields.order])).toEqual([
      ["B", 5],
      ["A", 0],
    ]);
  });

  it("sorts families by project id numerically, then in the families' order", () => {
    const state = load(`version: 1
server:
  base_url: https://app.example.com
projects:
  "10":
    pipeline_frontend_apps_configs: {configs: []}
    plugin_configs: {configs: []}
  "@current":
    plugin_configs: {configs: []}
  "2":
    plugin_configs: {configs: []}
`);
    expect(state.baseUrl).toBe("https://app.example.com");
    expect(state.families.map((family) => `${family.project}/${family.family}`)).toEqual([
      "2/plugin_configs",
      "10/plugin_configs",
      "10/pipeline_frontend_apps_configs",
      "@current/plugin_configs",
    ]);
  });

  it("accepts an unquoted numeric project key as the id written", () => {
    const state = load("version: 1\nprojects:\n  7:\n    plugin_configs: {configs: []}\n");
    expect(state.families[0]?.project).toBe("7");
  });

  it("accepts a manifest with no projects", () => {
    expect(load("version: 1\n").families).toEqual([]);
  });
});

describe("interpolation", () => {
  const manifest = `version: 1
projects:
  "\${PROJECT_ID:-1}":
    plugin_configs:
      configs:
        - name: "\${PREFIX}GeoIP"
          plugin: \${PLUGIN_ID}
          enabled: \${ENABLED:-true}
          match_action: \${ACTION:-null}
          description: "costs $$5, literal $\${HOME}, \${DESC:-none}"
`;

  it("replaces variables and types values by the schema", () => {
    const state = load(manifest, { PREFIX: "eu-", PLUGIN_ID: "7", HOME: "/root" });
    const family = state.families[0];
    expect(family?.project).toBe("1");
    expect(family?.configs[0]?.fields).toEqual({
      name: "eu-GeoIP",
      plugin: 7,
      order: 1,
      enabled: true,
      match_action: null,
      description: "costs $$5, literal ${HOME}, none",
    });
  });

  it("uses the environment over the default, and the default for an empty variable", () => {
    const state = load(manifest, {
      PROJECT_ID: "42",
      PREFIX: "",
      PLUGIN_ID: "7",
      ENABLED: "false",
      ACTION: "",
      DESC: "set",
    });
    const family = state.families[0];
    expect(family?.project).toBe("42");
    expect(family?.configs[0]?.fields).toMatchObject({
      name: "GeoIP",
      enabled: false,
      match_action: null,
      description: "costs $$5, literal ${HOME}, set",
    });
  });

  it("keeps an interpolated text field as text even when it looks like a number", () => {
    const state = load(manifest, { PREFIX: "", PLUGIN_ID: "7", DESC: "12" });
    expect(state.families[0]?.configs[0]?.fields.description).toBe("costs $$5, literal ${HOME}, 12");
    const named = load(
      'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - {name: "${N}", plugin: 1}\n',
      { N: "123" },
    );
    expect(named.families[0]?.configs[0]?.fields.name).toBe("123");
  });

  it("does not interpolate a variable's value again", () => {
    const state = load(manifest, { PREFIX: "${PLUGIN_ID}", PLUGIN_ID: "7" });
    expect(state.families[0]?.configs[0]?.fields.name).toBe("${PLUGIN_ID}GeoIP");
  });
});

describe("files and directories", () => {
  let directory: string;
  const projectOne =
    'version: 1\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - {name: A, plugin: 1, id: 5}\n';
  const projectTwo =
    'version: 1\nserver:\n  base_url: https://x.example\nprojects:\n  "2":\n    plugin_configs:\n      configs:\n        - {name: B, plugin: 2}\n';

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "pcsync-load-"));
    await mkdir(join(directory, "manifests"));
    await mkdir(join(directory, "empty"));
    await writeFile(join(directory, "manifests", "one.yaml"), projectOne);
    await writeFile(join(directory, "manifests", "two.yml"), projectTwo);
    await writeFile(join(directory, "manifests", "notes.txt"), "not a manifest");
    await writeFile(
      join(directory, "clash.yaml"),
      'version: 1\nserver:\n  base_url: https://y.example\nprojects:\n  "1":\n    plugin_configs:\n      configs:\n        - {name: C, plugin: 3, id: 5}\n',
    );
    await writeFile(join(directory, "pcsync.yaml"), projectOne);
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("reads pcsync.yaml when no path is given", async () => {
    const result = await loadManifests([], { env: {}, cwd: directory });
    expect(result.errors).toEqual([]);
    expect(result.files).toEqual(["pcsync.yaml"]);
  });

  it("says how to fix a missing default manifest", async () => {
    const result = await loadManifests([], { env: {}, cwd: join(directory, "empty") });
    expect(result.errors.map(formatDiagnostic)).toEqual([
      "pcsync.yaml: no such file or directory; create it (see examples/pcsync.yaml) or name the manifest with -f PATH",
    ]);
    expect(result.value).toBeUndefined();
  });

  it("refuses an empty directory", async () => {
    const result = await loadManifests(["empty"], { env: {}, cwd: directory });
    expect(result.errors.map(formatDiagnostic)).toEqual([
      "empty: directory has no *.yaml or *.yml files; add a manifest or name one with -f",
    ]);
  });

  it("reads the *.yaml and *.yml files of a directory and merges them", async () => {
    const result = await loadManifests(["manifests/"], { env: {}, cwd: directory });
    expect(result.errors).toEqual([]);
    expect(result.files).toEqual(["manifests/one.yaml", "manifests/two.yml"]);
    expect(result.value?.baseUrl).toBe("https://x.example");
    expect(result.value?.families.map((family) => family.project)).toEqual(["1", "2"]);
    expect(result.value?.families[1]?.configs[0]?.source.file).toBe("manifests/two.yml");
  });

  it("merges to the same desired state whatever the order of the files", async () => {
    const options = { env: {}, cwd: directory };
    const forward = await loadManifests(["manifests/one.yaml", "manifests/two.yml"], options);
    const backward = await loadManifests(["manifests/two.yml", "manifests/one.yaml"], options);
    expect(backward.value).toEqual(forward.value);
  });

  it("names files under the working directory relative to it", async () => {
    const result = await loadManifests([join(directory, "manifests", "one.yaml")], {
      env: {},
      cwd: directory,
    });
    expect(result.files).toEqual(["manifests/one.yaml"]);
  });

  it("reads a file named twice once, with a warning", async () => {
    const result = await loadManifests(["manifests", "manifests/one.yaml"], { env: {}, cwd: directory });
    expect(result.errors).toEqual([]);
    expect(result.warnings.map(formatDiagnostic)).toEqual([
      "manifests/one.yaml: warning: same file as manifests/one.yaml; read once",
    ]);
  });

  it("names both places of a project + family defined twice, the same way in any order", async () => {
    const options = { env: {}, cwd: directory };
    const expected = [
      'manifests/one.yaml:4:5: plugin_configs of project "1" is also defined at clash.yaml:6:5; define each project + family in one file',
      'manifests/one.yaml:6:36: id 5 is already pinned by "C" (plugin_configs of project "1") at clash.yaml:8:36; a record can be managed by one config only',
      'manifests/two.yml:3:13: server.base_url "https://x.example" differs from "https://y.example" at clash.yaml:3:13; set it in one file',
    ];
    for (const paths of [
      ["manifests", "clash.yaml"],
      ["clash.yaml", "manifests"],
    ]) {
      const result = await loadManifests(paths, options);
      expect(result.value).toBeUndefined();
      expect([...result.errors.map(formatDiagnostic)].sort()).toEqual(expected);
    }
  });
});
