// Turns one validated manifest file into blocks with positions (expand-types.ts): its templates,
// project sets and projects, each config with only the fields the manifest sets and where each
// came from. expand.ts turns the blocks of all files into the planner's DesiredFamily records.

import { FAMILY_NAMES } from "../families.js";
import type {
  ConfigItem,
  FamilyBlock,
  ManifestBlocks,
  NamedPlace,
  OverrideItem,
  ProjectSetBlock,
} from "./expand-types.js";
import type {
  Manifest,
  ManifestConfigOverride,
  ManifestFamily,
  ManifestTemplateConfig,
  ManifestTemplateNames,
} from "./manifest-schema-types.js";
import type { LocationIndex } from "./plain-manifest.js";
import type { SourceLocation } from "./types.js";

// The safety keys ride along with the fields, so that templates, sets and overrides carry them.
const SETTINGS = ["deleted", "protect", "ignore_fields"] as const;
const COPIED_FIELDS = ["plugin", "order", "enabled", "description", "match_action", ...SETTINGS] as const;
const OVERRIDE_FIELDS = [
  "plugin",
  "enabled",
  "description",
  "match_action",
  "order",
  "id",
  ...SETTINGS,
] as const;
const CONFIG_FIELDS = ["name", ...OVERRIDE_FIELDS] as const;

type Path = readonly (string | number)[];

/** Where the value (or key) at a path of the manifest was written. */
type Locate = (path: Path, which: "key" | "value") => SourceLocation;

export function readManifestBlocks(
  file: string,
  manifest: Manifest,
  locations: LocationIndex,
): ManifestBlocks {
  const at: Locate = (path, which) => {
    const location = locations.lookup(path);
    const position = (which === "key" ? location?.key : undefined) ?? location?.value ?? { line: 1, col: 1 };
    return { file, line: position.line, col: position.col };
  };
  const blocks: ManifestBlocks = { templates: [], sets: [], projects: [] };

  for (const [name, template] of Object.entries(manifest.templates ?? {})) {
    if (template === undefined) continue;
    const path = ["templates", name];
    blocks.templates.push({
      name,
      source: at(path, "key"),
      families: readFamilies(template, path, at),
    });
  }

  (manifest.project_sets ?? []).forEach((set, index) => {
    const path = ["project_sets", index];
    const block: ProjectSetBlock = {
      label: set.name ?? `project_sets[${index}]`,
      source: at(path, "value"),
      projects: typeof set.projects === "string" ? "all" : readNames(set.projects, [...path, "projects"], at),
      except: readNames(set.except ?? [], [...path, "except"], at),
      use: readNames(set.use ?? [], [...path, "use"], at),
      families: readFamilies(set, path, at),
    };
    blocks.sets.push(block);
  });

  for (const [project, projectBlock] of Object.entries(manifest.projects ?? {})) {
    if (projectBlock === undefined) continue;
    const path = ["projects", project];
    blocks.projects.push({
      project,
      source: at(path, "key"),
      ...(projectBlock.use === undefined ? {} : { useSource: at([...path, "use"], "key") }),
      use: readNames(projectBlock.use ?? [], [...path, "use"], at),
      families: readFamilies(projectBlock, path, at),
    });
  }
  return blocks;
}

function readNames(names: ManifestTemplateNames | readonly (string | number)[], path: Path, at: Locate) {
  return names.map(
    (name, index): NamedPlace => ({ name: String(name), source: at([...path, index], "value") }),
  );
}

function readFamilies(
  owner: Partial<Record<(typeof FAMILY_NAMES)[number], ManifestFamily | undefined>>,
  ownerPath: Path,
  at: Locate,
): FamilyBlock[] {
  const families: FamilyBlock[] = [];
  for (const family of FAMILY_NAMES) {
    const block = owner[family];
    if (block === undefined) continue;
    const path = [...ownerPath, family];
    const read: FamilyBlock = {
      family,
      source: at(path, "key"),
      valueSource: at(path, "value"),
      overrides: Object.entries(block.overrides ?? {}).flatMap(([name, override]) =>
        override === undefined ? [] : [readOverride(name, override, [...path, "overrides", name], at)],
      ),
      omit: readNames(block.omit ?? [], [...path, "omit"], at),
    };
    if (block.prune !== undefined)
      read.prune = { value: block.prune, source: at([...path, "prune"], "value") };
    if (block.drift !== undefined)
      read.drift = { value: block.drift, source: at([...path, "drift"], "value") };
    if (block.fields !== undefined)
      read.fields = { value: block.fields, source: at([...path, "fields"], "value") };
    if (block.protect !== undefined) {
      read.protect = block.protect.map((pattern, index) => ({
        pattern,
        source: at([...path, "protect", index], "value"),
      }));
    }
    if (block.configs !== undefined) {
      read.configs = block.configs.map((config, index) =>
        readConfig(config, [...path, "configs", index], at),
      );
    }
    families.push(read);
  }
  return families;
}

function readConfig(config: ManifestTemplateConfig & { id?: number }, path: Path, at: Locate): ConfigItem {
  const fields: ConfigItem["fields"] = { plugin: config.plugin, name: config.name };
  copyFields(config, fields);
  const fieldSources: ConfigItem["fieldSources"] = {};
  for (const field of CONFIG_FIELDS) {
    if (config[field] !== undefined) fieldSources[field] = at([...path, field], "value");
  }
  const item: ConfigItem = { fields, source: at(path, "value"), fieldSources };
  if (config.id !== undefined) item.id = config.id;
  return item;
}

function readOverride(name: string, override: ManifestConfigOverride, path: Path, at: Locate): OverrideItem {
  const item: OverrideItem = { name, source: at(path, "key"), fields: {}, fieldSources: {} };
  copyFields(override, item.fields);
  if (override.id !== undefined) item.id = override.id;
  for (const field of OVERRIDE_FIELDS) {
    if (override[field] !== undefined) item.fieldSources[field] = at([...path, field], "value");
  }
  return item;
}

/** The fields of a config or an override as written (but `name`), always in this order. */
function copyFields(from: ManifestConfigOverride, to: OverrideItem["fields"]): void {
  for (const field of COPIED_FIELDS) {
    const value = from[field];
    if (value !== undefined)
      (to as Record<string, unknown>)[field] = Array.isArray(value) ? [...value] : value;
  }
}
