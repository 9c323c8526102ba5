// Turns the current state of one project into manifest data that plans back to no changes: pure.
// Rendering it as a new file, or merging it into an existing one, is update-manifest.ts's job.

import type { PluginConfigRecord } from "../api/types.js";
import { FAMILY_NAMES, type FamilyName } from "../families.js";
import { pluginDefaults } from "../plan/compare-fields.js";

export interface ExportInput {
  project: string;
  /** The families to export. */
  families: { family: FamilyName; records: PluginConfigRecord[] }[];
  /**
   * Ids of the project's frontend app configs, when plugin_configs is exported without its
   * frontend family; otherwise they are taken from the exported frontend family.
   */
  frontendIds?: ReadonlySet<number>;
}

/** One config as a manifest writes it; key order is the order written. */
export interface ExportedConfig {
  name: string;
  id?: number;
  plugin: number;
  enabled: boolean;
  description?: string;
  match_action?: number;
  order?: number;
}

export interface ExportedFamily {
  family: FamilyName;
  configs: ExportedConfig[];
}

export interface ExportResult {
  project: string;
  families: ExportedFamily[];
  warnings: string[];
  configCount: number;
}

function sortByOrder(records: readonly PluginConfigRecord[]): PluginConfigRecord[] {
  return [...records].sort((a, b) => a.order - b.order || a.plugin - b.plugin || a.id - b.id);
}

export function buildManifest(input: ExportInput): ExportResult {
  const warnings: string[] = [];
  const frontendIds =
    input.frontendIds ??
    new Set(
      input.families
        .filter((item) => item.family === "pipeline_frontend_apps_configs")
        .flatMap((item) => item.records.map((record) => record.id)),
    );
  const families: ExportedFamily[] = [];

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
    const nameOf = (record: PluginConfigRecord): string =>
      record.name ?? pluginDefaults(record).name ?? `plugin ${record.plugin} config ${record.id}`;
    const nameCounts = new Map<string, number>();
    for (const record of records) nameCounts.set(nameOf(record), (nameCounts.get(nameOf(record)) ?? 0) + 1);

    const configs = records.map((record): ExportedConfig => {
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
      return {
        name,
        ...(pin ? { id: record.id } : {}),
        plugin: record.plugin,
        enabled: record.enabled,
        ...(record.description === null ? {} : { description: record.description }),
        ...(record.match_action === null ? {} : { match_action: record.match_action }),
        ...(positional ? {} : { order: record.order }),
      };
    });
    families.push({ family, configs });
  }

  return {
    project: input.project,
    families,
    warnings: [...new Set(warnings)],
    configCount: families.reduce((total, family) => total + family.configs.length, 0),
  };
}
