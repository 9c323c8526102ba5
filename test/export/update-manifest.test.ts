import { describe, expect, it } from "vitest";
import { buildManifest } from "../../src/export/build-manifest.js";
import { renderNewManifest, updateManifestText } from "../../src/export/update-manifest.js";
import { loadManifestSources } from "../../src/manifest/index.js";
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
    expect(renderNewManifest(result)).toContain("prune: false");
  });

  it("refuses a file that is not a manifest", () => {
    expect(() => updateManifestText("- a\n- b\n", result, "list.yaml")).toThrow(/not a pcsync manifest/);
    expect(() => updateManifestText("a: [\n", result, "broken.yaml")).toThrow(/not valid YAML/);
  });
});
