// `drift: warn | heal` on a family: set in a project, a project set or a template, with prune's
// precedence (the project's own, then a set's, then the templates'), and disagreements refused.

import { describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifestSources, variablesFromEnvironment } from "../../src/manifest/index.js";
import { manifest } from "../support/manifest-text.js";

function load(...lines: string[]) {
  return loadManifestSources(
    [{ file: "drift.yaml", text: manifest(...lines) }],
    variablesFromEnvironment({}),
  );
}

const TEMPLATES = [
  "version: 1",
  "templates:",
  "  healed:",
  "    plugin_configs:",
  "      drift: heal",
  "      configs:",
  "        - { name: GeoIP, plugin: 1 }",
  "  watched:",
  "    plugin_configs:",
  "      drift: warn",
  "      configs:",
  "        - { name: Filter, plugin: 2 }",
];

describe("drift: on a family", () => {
  it("comes from the project, else a set, else the templates; absent, the family has none (--mode decides)", () => {
    const result = load(
      ...TEMPLATES,
      "project_sets:",
      '  - projects: ["2"]',
      "    plugin_configs: { drift: warn }",
      "projects:",
      '  "1": { use: [healed] }',
      '  "2": { use: [healed] }',
      '  "3":',
      "    use: [healed]",
      "    plugin_configs: { drift: warn }",
      '  "4":',
      "    plugin_configs:",
      "      configs: [{ name: Plain, plugin: 1 }]",
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const modes = Object.fromEntries(
      (result.value?.families ?? []).map((family) => [family.project, family.drift]),
    );
    expect(modes).toEqual({ "1": "heal", "2": "warn", "3": "warn", "4": undefined });
  });

  it("refuses a value that is neither warn nor heal", () => {
    const typo = load(
      "version: 1",
      "projects:",
      '  "1":',
      "    plugin_configs:",
      "      drift: fix",
      "      configs: []",
    );
    expect(typo.errors.map(formatDiagnostic).join("\n")).toBe(
      'drift.yaml:5:14: "drift" text "fix" is not one of "warn", "heal"',
    );
  });
});
