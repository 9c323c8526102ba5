// Turns one validated manifest file into the planner's DesiredFamily records: resolved orders,
// only the fields the manifest sets, and where each came from.

import { FAMILY_NAMES } from "../families.js";
import type { Position } from "./diagnostics.js";
import type { Manifest, ManifestConfig } from "./manifest-schema-types.js";
import type { LocationIndex } from "./plain-manifest.js";
import type { DesiredConfig, DesiredFamily, DesiredFields, SourceLocation } from "./types.js";

const SOURCED_FIELDS = ["name", "plugin", "enabled", "description", "match_action", "order", "id"] as const;

export function buildDesiredFamilies(
  file: string,
  manifest: Manifest,
  locations: LocationIndex,
): DesiredFamily[] {
  const families: DesiredFamily[] = [];
  const at = (path: readonly (string | number)[], which: "key" | "value"): SourceLocation => {
    const location = locations.lookup(path);
    const position: Position = (which === "key" ? location?.key : undefined) ??
      location?.value ?? { line: 1, col: 1 };
    return { file, line: position.line, col: position.col };
  };

  for (const [project, projectBlock] of Object.entries(manifest.projects ?? {})) {
    if (projectBlock === undefined) continue;
    for (const family of FAMILY_NAMES) {
      const block = projectBlock[family];
      if (block === undefined) continue;
      const configsPath = ["projects", project, family, "configs"];
      const explicitOrder =
        block.configs.length > 0 && block.configs.every((config) => config.order !== undefined);
      families.push({
        project,
        family,
        prune: block.prune ?? false,
        explicitOrder,
        configs: block.configs.map((config, index) =>
          buildConfig(config, index, [...configsPath, index], at),
        ),
        source: at(["projects", project, family], "key"),
      });
    }
  }
  return families;
}

function buildConfig(
  config: ManifestConfig,
  index: number,
  path: readonly (string | number)[],
  at: (path: readonly (string | number)[], which: "key" | "value") => SourceLocation,
): DesiredConfig {
  // Positional order is 1-based, as the service numbers them.
  const fields: DesiredFields = {
    plugin: config.plugin,
    name: config.name,
    order: config.order ?? index + 1,
  };
  if (config.enabled !== undefined) fields.enabled = config.enabled;
  if (config.description !== undefined) fields.description = config.description;
  if (config.match_action !== undefined) fields.match_action = config.match_action;

  const fieldSources: DesiredConfig["fieldSources"] = {};
  for (const field of SOURCED_FIELDS) {
    if (config[field] !== undefined) fieldSources[field] = at([...path, field], "value");
  }
  const desired: DesiredConfig = { fields, source: at(path, "value"), fieldSources };
  if (config.id !== undefined) desired.id = config.id;
  return desired;
}
