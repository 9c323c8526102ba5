import { describe, expect, it } from "vitest";
import { buildManifest } from "../../src/export/build-manifest.js";
import { renderNewManifest, updateManifestText } from "../../src/export/update-manifest.js";
import { loadManifestSources, resolveTextWith, variablesFromEnvironment } from "../../src/manifest/index.js";
import { remoteRecord } from "../support/builders.js";

const EXISTING = `# Our plugin configs. Reviewed by the data team.
version: 1
projects:
  # Web
  "1":
    plugin_configs:
      prune: true # deletes what is not listed
      configs:
        # Enrichment comes first.
        - name: GeoIP
          plugin: 1
          enabled: false # switched off during the incident
        - name: Gone
          plugin: 4
  # Mobile is managed by another team
  "2":
    plugin_configs:
      configs:
        - name: Other
          plugin: 3
`;

describe("updateManifestText", () => {
  const result = buildManifest({
    project: "1",
    families: [
      {
        family: "plugin_configs",
        records: [
          remoteRecord({ id: 9, name: "Filter", plugin: 2, order: 1, enabled: true }),
          remoteRecord({ id: 4, name: "GeoIP", plugin: 1, order: 2, enabled: true, description: "Country" }),
        ],
      },
    ],
  });

  it("updates values and order in place, keeping comments, other projects and the prune choice", () => {
    const text = updateManifestText(EXISTING, result, "pcsync.yaml");
    expect(text).toContain("# Our plugin configs. Reviewed by the data team.");
    expect(text).toContain("# Enrichment comes first.");
    expect(text).toContain("prune: true # deletes what is not listed");
    expect(text).toContain("# Mobile is managed by another team");
    expect(text).toContain("- name: Other");
    expect(text).not.toContain("name: Gone");
    // Filter is first in the remote order, so first in the list (the list position is the order).
    expect(text.indexOf("name: Filter")).toBeLessThan(text.indexOf("name: GeoIP"));
    expect(text).toMatch(/name: GeoIP\n\s+plugin: 1\n\s+enabled: true/);
    expect(text).toContain("description: Country");
  });

  it("produces a manifest that loads to the exported state", () => {
    const text = updateManifestText(EXISTING, result, "pcsync.yaml");
    const loaded = loadManifestSources([{ file: "pcsync.yaml", text }]);
    expect(loaded.errors).toEqual([]);
    const family = loaded.value?.families.find((item) => item.project === "1");
    expect(
      family?.configs.map((config) => [config.fields.name, config.fields.order, config.fields.enabled]),
    ).toEqual([
      ["Filter", 1, true],
      ["GeoIP", 2, true],
    ]);
  });

  it("adds a project that the file does not have yet, and writes new files from scratch", () => {
    const text = updateManifestText("version: 1\nprojects: {}\n", result, "new.yaml");
    expect(loadManifestSources([{ file: "new.yaml", text }]).errors).toEqual([]);
    expect(renderNewManifest([result])).toContain("prune: false");
  });

  it("refuses a fleet manifest: a templated config written out too would be there twice", () => {
    const fleet =
      'version: 1\ntemplates:\n  base:\n    plugin_configs:\n      configs: []\nprojects:\n  "1":\n    use: [base]\n';
    expect(() => updateManifestText(fleet, result, "fleet.yaml")).toThrow(
      /^fleet.yaml uses templates, which export does not update in place; export to a new file/,
    );
    const sets = "version: 1\nproject_sets:\n  - projects: all\n    use: []\n";
    expect(() => updateManifestText(sets, result, "sets.yaml")).toThrow(/sets.yaml uses project_sets/);
  });

  it("refuses a file that is not a manifest", () => {
    expect(() => updateManifestText("- a\n- b\n", result, "list.yaml")).toThrow(/not a pcsync manifest/);
    expect(() => updateManifestText("a: [\n", result, "broken.yaml")).toThrow(/not valid YAML/);
  });
});

describe("updateManifestText on a manifest with ${NAME}", () => {
  const WITH_VARIABLES = `version: 1
projects:
  "\${PROJECT_ID:-1}":
    plugin_configs:
      configs:
        - name: "\${PREFIX}GeoIP"
          plugin: \${PLUGIN_ID}
          enabled: \${ENABLED:-false}
          description: "\${DESC}"
`;
  const exported = buildManifest({
    project: "1",
    families: [
      {
        family: "plugin_configs",
        records: [
          remoteRecord({
            id: 4,
            name: "eu-GeoIP",
            plugin: 7,
            order: 1,
            enabled: true,
            description: "Country",
          }),
        ],
      },
    ],
  });
  const variables = variablesFromEnvironment({
    PCSYNC_VAR_PREFIX: "eu-",
    PCSYNC_VAR_PLUGIN_ID: "7",
    PCSYNC_VAR_DESC: "Old text",
  });

  it("updates the block whose key interpolates to the project, keeping references that still agree", () => {
    const text = updateManifestText(WITH_VARIABLES, exported, "pcsync.yaml", {
      resolveText: resolveTextWith(variables),
    });
    expect(text).toContain('"${PROJECT_ID:-1}":');
    expect(text).not.toMatch(/^ {2}"?1"?:/m);
    expect(text).toContain('name: "${PREFIX}GeoIP"');
    expect(text).toContain("plugin: ${PLUGIN_ID}");
    // The remote differs from what these references give: the exported values replace them.
    expect(text).toMatch(/enabled: true\n/);
    expect(text).toContain("description: Country");
    const loaded = loadManifestSources([{ file: "pcsync.yaml", text }], variables);
    expect(loaded.errors).toEqual([]);
    expect(loaded.value?.families[0]?.configs[0]?.fields).toMatchObject({
      name: "eu-GeoIP",
      plugin: 7,
      enabled: true,
      description: "Country",
    });
  });

  it("warns about a project key it cannot interpolate, and never reads other environment variables", () => {
    const warnings: string[] = [];
    const plain = variablesFromEnvironment({ PROJECT_ID: "1", PREFIX: "eu-" });
    const text = updateManifestText(WITH_VARIABLES.replace(":-1", ""), exported, "pcsync.yaml", {
      resolveText: resolveTextWith(plain),
      warn: (message) => warnings.push(message),
    });
    expect(warnings).toEqual([
      'pcsync.yaml: project key "${PROJECT_ID}" cannot be interpolated (a variable is not set), so it is not matched with project 1; pass the PCSYNC_VAR_*, --var or --var-file that plan uses',
    ]);
    expect(text).toMatch(/^ {2}"1":/m);
  });
});

describe("updateManifestText with a literal ${ in the remote state", () => {
  const exported = buildManifest({
    project: "1",
    families: [
      {
        family: "plugin_configs",
        records: [
          remoteRecord({ id: 4, name: "Cost ${MONTH}", plugin: 1, order: 1, enabled: true }),
          remoteRecord({ id: 5, name: "New ${X}", plugin: 2, order: 2, enabled: true, description: "${Y}" }),
        ],
      },
    ],
  });

  it("keeps an existing escaped $${, escapes what it adds, and a written ${ is not taken for the literal", () => {
    const existing = `version: 1
projects:
  "1":
    plugin_configs:
      configs:
        - name: Cost $\${MONTH} # escaped, kept as written
          plugin: 1
          enabled: true
`;
    const text = updateManifestText(existing, exported, "pcsync.yaml", {
      resolveText: resolveTextWith(variablesFromEnvironment({})),
    });
    expect(text).toContain("- name: Cost $${MONTH} # escaped, kept as written");
    expect(text).toContain("- name: New $${X}");
    expect(text).toContain("description: $${Y}");
    const loaded = loadManifestSources([{ file: "pcsync.yaml", text }]);
    expect(loaded.errors).toEqual([]);
    expect(loaded.value?.families[0]?.configs.map((config) => config.fields.name)).toEqual([
      "Cost ${MONTH}",
      "New ${X}",
    ]);
    // An unescaped `${MONTH}` means a variable, not the remote's literal text: it is rewritten.
    const unescaped = existing.replace("Cost $${MONTH}", "Cost ${MONTH}");
    const rewritten = updateManifestText(unescaped, exported, "pcsync.yaml", {
      resolveText: resolveTextWith(variablesFromEnvironment({ PCSYNC_VAR_MONTH: "May" })),
    });
    expect(rewritten).toContain("- name: Cost $${MONTH}");
  });
});
