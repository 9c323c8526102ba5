// Every mapping of the manifest whose keys the schema fixes (the top, a project, a family, a config,
// a template's, a project set's and its overrides', the rollout's, a wave's, the health checks'):
// a key written with two letters swapped is refused at its own line with a "did you mean" naming
// the key. Built from one manifest that uses every such mapping, so a mapping in a list, or reached
// through a reference, cannot be missed as a project set's overrides once were.

import { describe, expect, it } from "vitest";
import { isMap, isScalar, isSeq, parseDocument } from "yaml";
import { formatDiagnostic, loadManifestSources } from "../../src/manifest/index.js";

const EVERY_MAPPING = `version: 1
server:
  base_url: https://posthog.example.com
owner: team-a
templates:
  base:
    plugin_configs:
      prune: true
      configs:
        - name: GeoIP
          plugin: 1
          enabled: true
project_sets:
  - name: web
    projects: ["1"]
    use: [base]
    plugin_configs:
      overrides:
        GeoIP:
          description: from the set
rollout:
  waves:
    - name: canary
      projects: ["1"]
    - name: rest
      percent: 100
  bake: 1m
  health:
    logs:
      max_error_ratio: 0.1
    prometheus:
      url: http://prometheus:9090
      query: 'sum(up{project="{{project}}"})'
      max: 0
      basic_auth:
        username: pcsync
        password_env: PROM_PASSWORD
  on_failure: halt
projects:
  "1":
    plugin_configs:
      overrides:
        GeoIP:
          enabled: false
      configs:
        - name: Filter
          plugin: 2
          description: drops test events
    pipeline_frontend_apps_configs:
      configs:
        - name: Bar
          plugin: 40
`;

// Mappings whose keys are names the user chooses: a misspelt one is another entry, not an error.
const FREE_KEYS = new Set(["templates", "projects", "overrides"]);

interface Place {
  /** The keys and list indexes down to the mapping. */
  path: (string | number)[];
  /** The same, for the test's name. */
  where: string;
  key: string;
}

function fixedKeyMappings(): Place[] {
  const places: Place[] = [];
  const visit = (node: unknown, path: (string | number)[], parentKey: string | undefined): void => {
    if (isMap(node)) {
      const key = node.items
        .map((pair) => (isScalar(pair.key) ? String(pair.key.value) : ""))
        .find((each) => each.length >= 4);
      if (!FREE_KEYS.has(parentKey ?? "") && key !== undefined)
        places.push({ path, where: path.join(".") || "(top)", key });
      for (const pair of node.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : "?";
        visit(pair.value, [...path, name], name);
      }
    } else if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) visit(item, [...path, index], parentKey);
    }
  };
  visit(parseDocument(EVERY_MAPPING).contents, [], undefined);
  return places;
}

/** `key` with its second and third letters swapped: close enough for a suggestion. */
const misspelt = (key: string) => `${key[0]}${key[2]}${key[1]}${key.slice(3)}`;

describe("a misspelt key in any mapping whose keys are fixed", () => {
  it("the manifest that uses every mapping is valid as it is", () => {
    const result = loadManifestSources([{ file: "every.yaml", text: EVERY_MAPPING }]);
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
  });

  const places = fixedKeyMappings();
  it("covers the mappings in lists and behind references", () => {
    const where = places.map((place) => place.where);
    for (const expected of [
      "(top)",
      "project_sets.0",
      "project_sets.0.plugin_configs",
      "project_sets.0.plugin_configs.overrides.GeoIP",
      "rollout.waves.1",
      "rollout.health.prometheus.basic_auth",
      "templates.base.plugin_configs.configs.0",
      "projects.1.plugin_configs.overrides.GeoIP",
      "projects.1.pipeline_frontend_apps_configs.configs.0",
    ])
      expect(where).toContain(expected);
  });

  it.each(places.map((place) => [place.where, place] as const))("%s", (_where, place) => {
    const document = parseDocument(EVERY_MAPPING);
    const target = place.path.length === 0 ? document.contents : document.getIn(place.path, true);
    if (!isMap(target)) throw new Error(`no mapping at ${place.where}`);
    const wrong = misspelt(place.key);
    target.set(wrong, target.get(place.key, true));
    target.delete(place.key);
    const text = document.toString();
    const line =
      text
        .split("\n")
        .findIndex((each) => each.trimStart().startsWith(`${wrong}:`) || each.includes(` ${wrong}:`)) + 1;
    const printed = loadManifestSources([{ file: "every.yaml", text }]).errors.map(formatDiagnostic);
    expect(printed, text).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^every\\.yaml:${line}:\\d+: unknown (key|family) "${wrong}"; did you mean "${place.key}"\\?$`,
        ),
      ),
    );
  });
});
