// Fleet manifests: loading 200 projects that share templates against loading the same configs
// written out, to show template expansion costs no more than the configs it produces.

import { stringify } from "yaml";
import { loadManifestSources } from "../src/manifest/index.js";
import type { Row, Scenario } from "./harness.js";

const PROJECTS = 200;
const TEMPLATE_CONFIGS = 10;
const ROUNDS = 5;

function templateConfigs(prefix: string) {
  return Array.from({ length: TEMPLATE_CONFIGS }, (_, index) => ({
    name: `${prefix} ${index + 1}`,
    plugin: (index % 8) + 1,
    enabled: index % 2 === 0,
  }));
}

function fleetText(projects = PROJECTS): string {
  const ids = Array.from({ length: projects }, (_, index) => String(index + 1));
  return stringify({
    version: 1,
    templates: {
      baseline: { plugin_configs: { configs: templateConfigs("Base") } },
      apps: { pipeline_frontend_apps_configs: { configs: templateConfigs("App") } },
    },
    project_sets: [{ name: "all listed", projects: ids, use: ["baseline", "apps"] }],
    projects: Object.fromEntries(
      ids.map((id) => [
        id,
        { plugin_configs: { overrides: { "Base 1": { description: `Project ${id}` } } } },
      ]),
    ),
  });
}

function writtenOutText(): string {
  const ids = Array.from({ length: PROJECTS }, (_, index) => String(index + 1));
  return stringify({
    version: 1,
    projects: Object.fromEntries(
      ids.map((id) => {
        const base = templateConfigs("Base");
        base[0] = { ...base[0], description: `Project ${id}` } as (typeof base)[number];
        return [
          id,
          {
            plugin_configs: { configs: base },
            pipeline_frontend_apps_configs: { configs: templateConfigs("App") },
          },
        ];
      }),
    ),
  });
}

/** The fastest of a few loads (the machine is shared: the minimum is the least disturbed). */
function fastestLoadMs(text: string): { ms: number; configs: number } {
  let best = Number.POSITIVE_INFINITY;
  let configs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const result = loadManifestSources([{ file: "fleet.yaml", text }]);
    best = Math.min(best, performance.now() - started);
    if (result.value === undefined) throw new Error(result.errors.map((error) => error.message).join("\n"));
    configs = result.value.families.reduce((sum, family) => sum + family.configs.length, 0);
  }
  return { ms: best, configs };
}

export const FLEET_SCENARIOS: readonly Scenario[] = [
  {
    id: "fleet-load",
    title: `Load ${PROJECTS} projects from templates vs written out (${2 * TEMPLATE_CONFIGS} configs each)`,
    default: true,
    async run() {
      const fleet = fleetText();
      const written = writtenOutText();
      const expanded = fastestLoadMs(fleet);
      const plain = fastestLoadMs(written);
      // Ten times the projects: linear expansion takes about ten times as long, not a hundred.
      const tenfold = fastestLoadMs(fleetText(PROJECTS * 10));
      const rows: Row[] = [
        {
          metric: "manifest size, templates / written out",
          value: `${fleet.length} / ${written.length} bytes`,
        },
        { metric: "configs loaded (both)", value: `${expanded.configs} / ${plain.configs}` },
        { metric: "load, templates", value: `${expanded.ms.toFixed(1)} ms` },
        { metric: "load, written out", value: `${plain.ms.toFixed(1)} ms` },
        {
          metric: "time ratio templates / written out",
          value: (expanded.ms / plain.ms).toFixed(2),
          target: "<= 1.5",
          pass: expanded.ms / plain.ms <= 1.5,
        },
        { metric: `load, templates, ${PROJECTS * 10} projects`, value: `${tenfold.ms.toFixed(1)} ms` },
        {
          metric: `time ratio ${PROJECTS * 10} / ${PROJECTS} projects`,
          value: (tenfold.ms / expanded.ms).toFixed(2),
          target: "<= 15 (linear: 10)",
          pass: tenfold.ms / expanded.ms <= 15,
        },
      ];
      return { id: "fleet-load", title: this.title, rows };
    },
  },
];
