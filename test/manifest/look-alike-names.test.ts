// Configs of a manifest are named as the planner matches records: a name in another Unicode
// normalisation is the same name, whether it repeats a config of one block, of a template, or is
// the name an override or omit gives.

import { describe, expect, it } from "vitest";
import { loadManifestSources } from "../../src/manifest/index.js";

const NFC = "caf\u00e9";
const NFD = "cafe\u0301";

function load(project: string) {
  const text = `version: 1
templates:
  base:
    plugin_configs:
      configs:
        - { name: "${NFC}", plugin: 1, enabled: true }
projects:
  "1":
    use: [base]
    plugin_configs:
${project}`;
  return loadManifestSources([{ file: "pcsync.yaml", text }]);
}

describe("look-alike config names in a manifest", () => {
  it("an own config named as a templated one, in NFD, is the same config: refused", () => {
    const loaded = load(`      configs:\n        - { name: "${NFD}", plugin: 2 }\n`);
    expect(loaded.errors.map((error) => error.message)).toEqual([
      `config "${NFD}" is also provided at pcsync.yaml:6 via pcsync.yaml:9; a name identifies one config of a project + family: rename one, or omit the templated one`,
    ]);
  });

  it("an override or omit spelled in NFD reaches the NFC templated config", () => {
    const overridden = load(`      overrides:\n        "${NFD}": { enabled: false }\n`);
    expect(overridden.errors).toEqual([]);
    const configs = overridden.value?.families[0]?.configs ?? [];
    expect(configs.map((config) => [config.fields.name, config.fields.enabled])).toEqual([[NFC, false]]);

    const omitted = load(`      omit: ["${NFD}"]\n`);
    expect(omitted.errors).toEqual([]);
    expect(omitted.value?.families[0]?.configs ?? []).toEqual([]);
  });
});
