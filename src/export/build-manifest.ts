// Turns the current state of one project into a manifest that plans back to no changes: pure.

import { Document } from "yaml";
import type { PluginConfigRecord } from "../api/types.js";
import { FAMILY_NAMES, type FamilyName } from "../families.js";
import { pluginDefaults } from "../plan/compare-fields.js";

export interface ExportInput {
  project: string;
  families: { family: FamilyName; records: PluginConfigRecord[] }[];
}

export interface ExportResult {
  yaml: string;
  warnings: string[];
  configCount: number;
}

function sortByOrder(records: readonly PluginConfigRecord[]): PluginConfigRecord[] {
  return [...records].sort((a, b) => a.order - b.order || a.plugin - b.plugin || a.id - b.id);
}

export function buildManifest(input: ExportInput): ExportResult {
  const warnings: string[] = [];
  const frontendIds = new Set(
    input.families
      .filter((item) => item.family === "pipeline_frontend_apps_configs")
      .flatMap((item) => item.records.map((record) => record.id)),
  );
  const projectBlock: Record<string, unknown> = {};
  let configCount = 0;

  for (const family of FAMILY_NAMES) {
    const entry = input.families.find((item) => item.family === family);
    if (!entry) continue;
    // Where plugin_configs also lists the frontend apps (posthog-2024), they are exported once,
    // under the frontend family.
    const records = sortByOrder(
      family === "plugin_configs"
        ? entry.records.filter((record) => !frontendIds.has(record.id))
        : entry.records,
    );
    const positional = records.every((record, index) => record.order === index + 1);
    const nameCounts = new Map<string, number>();
    const nameOf = (record: PluginConfigRecord): string =>
      record.name ?? pluginDefaults(record).name ?? `plugin ${record.plugin} config ${record.id}`;
    for (const record of records) nameCounts.set(nameOf(record), (nameCounts.get(nameOf(record)) ?? 0) + 1);

    const configs = records.map((record) => {
      const name = nameOf(record);
      const pin = record.name === null || (nameCounts.get(name) ?? 0) > 1;
      if (record.name === null) {
        warnings.push(
          `record ${record.id} in ${family} has no name; exported as "${name}" pinned by id (planning it will set that name)`,
        );
      } else if (pin) {
        warnings.push(
          `${nameCounts.get(name)} records in ${family} are named "${name}"; each is pinned by id`,
        );
      }
      const config: Record<string, unknown> = { name };
      if (pin) config.id = record.id;
      config.plugin = record.plugin;
      config.enabled = record.enabled;
      if (record.description !== null) config.description = record.description;
      if (record.match_action !== null) config.match_action = record.match_action;
      if (!positional) config.order = record.order;
      return config;
    });
    configCount += configs.length;
    projectBlock[family] = { prune: false, configs };
  }

  const document = new Document({ version: 1, projects: { [input.project]: projectBlock } });
  document.commentBefore = ` Exported by pcsync export --project ${input.project}. prune is false: records added
 remotely are left alone until you set prune: true.`;
  return { yaml: document.toString({ lineWidth: 0 }), warnings: [...new Set(warnings)], configCount };
}
