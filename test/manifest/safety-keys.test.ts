// The safety keys through templates, project sets and overrides: each reaches the planner's
// desired state for the projects it applies to, and a protect pattern that names no config warns
// at its file:line:col.

import { describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifestSources, variablesFromEnvironment } from "../../src/manifest/index.js";
import { manifest } from "../support/manifest-text.js";

function load(text: string) {
  return loadManifestSources([{ file: "fleet.yaml", text }], variablesFromEnvironment({}));
}

const FLEET = manifest(
  "version: 1",
  "templates:",
  "  base:",
  "    plugin_configs:",
  '      protect: ["Legacy *"]', // 5
  "      fields: all",
  "      configs:",
  "        - { name: GeoIP, plugin: 1, protect: true, ignore_fields: [description] }",
  "        - { name: Old, plugin: 2, deleted: true }",
  "        - { name: Filter, plugin: 3 }",
  "project_sets:",
  '  - projects: ["1", "2"]',
  "    use: [base]",
  "    plugin_configs:",
  '      protect: ["Filtre"]', // 15
  "      fields: listed",
  "projects:",
  '  "2":',
  "    plugin_configs:",
  "      fields: all",
  "      overrides:",
  "        GeoIP: { ignore_fields: [enabled, order], protect: false }",
);

describe("safety keys in a fleet", () => {
  it("reach each project: protections add up, the nearest fields: wins, overrides replace", () => {
    const result = load(FLEET);
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const [one, two] = result.value?.families ?? [];
    expect(one?.protect?.map((entry) => entry.pattern)).toEqual(["Legacy *", "Filtre"]);
    expect(one?.fields).toBe("listed");
    expect(two?.fields).toBe("all");
    const geoIp = (family: typeof one) =>
      family?.configs.find((config) => config.fields.name === "GeoIP")?.fields;
    expect(geoIp(one)).toMatchObject({ protect: true, ignore_fields: ["description"] });
    expect(geoIp(two)).toMatchObject({ protect: false, ignore_fields: ["enabled", "order"] });
    // A deleted config takes no place in the order: Filter stays second.
    const orders = new Map(one?.configs.map((config) => [config.fields.name, config.fields.order]));
    expect([orders.get("GeoIP"), orders.get("Filter")]).toEqual([1, 2]);
  });

  it("warns, at its place, of a protect pattern that names no config", () => {
    const warnings = load(FLEET).warnings.map(formatDiagnostic);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^fleet\.yaml:15:17: warning: protect: "Filtre" matches no config of plugin_configs \(it still protects remote records of that name\); did you mean "Filter"\? \(for projects 1, 2\)$/,
      ),
    );
    expect(warnings.join("\n")).toContain('protect: "Legacy *" matches no config');
  });
});
