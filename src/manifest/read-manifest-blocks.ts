// Turns one validated manifest file into blocks with positions (expand-types.ts): its templates,
// project sets and projects, each config with only the fields the manifest sets and where each
// came from. expand-manifest.ts turns the blocks of all files into the planner's DesiredFamily records.

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
import { escapePointerSegment, type LocationIndex } from "./plain-manifest.js";
import type { DesiredFields, SourceLocation } from "./types.js";

// The safety keys ride along with the fields, so that templates, sets and overrides carry them.
const SETTINGS = ["deleted", "protect", "ignore_fields"] as const;
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

/** Where the value (or key) at a JSON pointer was written; pointers are built once per block or config. */
type Locate = (pointer: string, which: "key" | "value") => SourceLocation;

export function readManifestBlocks(
  file: string,
  manifest: Manifest,
  locations: LocationIndex,
): ManifestBlocks {
  const at: Locate = (pointer, which) => {
    const location = locations.get(pointer);
    const position = (which === "key" ? location?.key : undefined) ?? location?.value ?? { line: 1, col: 1 };
    return { file, line: position.line, col: position.col };
  };
  const blocks: ManifestBlocks = { templates: [], sets: [], projects: [] };

  for (const [name, template] of Object.entries(manifest.templates ?? {})) {
    if (template === undefined) continue;
    const pointer = `/templates/${escapePointerSegment(name)}`;
    blocks.templates.push({
      name,
      source: at(pointer, "key"),
      families: readFamilies(template, pointer, at),
    });
  }

  (manifest.project_sets ?? []).forEach((set, index) => {
    const pointer = `/project_sets/${index}`;
    const block: ProjectSetBlock = {
      label: set.name ?? `project_sets[${index}]`,
      source: at(pointer, "value"),
      projects: typeof set.projects === "string" ? "all" : readNames(set.projects, `${pointer}/projects`, at),
      except: readNames(set.except ?? [], `${pointer}/except`, at),
      use: readNames(set.use ?? [], `${pointer}/use`, at),
      families: readFamilies(set, pointer, at),
    };
    blocks.sets.push(block);
  });

  for (const [project, projectBlock] of Object.entries(manifest.projects ?? {})) {
    if (projectBlock === undefined) continue;
    const pointer = `/projects/${escapePointerSegment(project)}`;
    blocks.projects.push({
      project,
      source: at(pointer, "key"),
      ...(projectBlock.use === undefined ? {} : { useSource: at(`${pointer}/use`, "key") }),
      use: readNames(projectBlock.use ?? [], `${pointer}/use`, at),
      families: readFamilies(projectBlock, pointer, at),
    });
  }
  return blocks;
}

function readNames(names: ManifestTemplateNames | readonly (string | number)[], pointer: string, at: Locate) {
  return names.map(
    (name, index): NamedPlace => ({ name: String(name), source: at(`${pointer}/${index}`, "value") }),
  );
}

function readFamilies(
  owner: Partial<Record<(typeof FAMILY_NAMES)[number], ManifestFamily | undefined>>,
  ownerPointer: string,
  at: Locate,
): FamilyBlock[] {
  const families: FamilyBlock[] = [];
  for (const family of FAMILY_NAMES) {
    const block = owner[family];
    if (block === undefined) continue;
    const pointer = `${ownerPointer}/${family}`;
    const read: FamilyBlock = {
      family,
      source: at(pointer, "key"),
      valueSource: at(pointer, "value"),
      overrides: Object.entries(block.overrides ?? {}).flatMap(([name, override]) =>
        override === undefined
          ? []
          : [readOverride(name, override, `${pointer}/overrides/${escapePointerSegment(name)}`, at)],
      ),
      omit: readNames(block.omit ?? [], `${pointer}/omit`, at),
    };
    if (block.prune !== undefined)
      read.prune = { value: block.prune, source: at(`${pointer}/prune`, "value") };
    if (block.drift !== undefined)
      read.drift = { value: block.drift, source: at(`${pointer}/drift`, "value") };
    if (block.fields !== undefined)
      read.fields = { value: block.fields, source: at(`${pointer}/fields`, "value") };
    if (block.protect !== undefined) {
      read.protect = block.protect.map((pattern, index) => ({
        pattern,
        source: at(`${pointer}/protect/${index}`, "value"),
      }));
    }
    if (block.configs !== undefined) {
      read.configs = block.configs.map((config, index) =>
        readConfig(config, `${pointer}/configs/${index}`, at),
      );
    }
    families.push(read);
  }
  return families;
}

function readConfig(
  config: ManifestTemplateConfig & { id?: number },
  pointer: string,
  at: Locate,
): ConfigItem {
  const fields: ConfigItem["fields"] = { plugin: config.plugin, name: config.name };
  if (config.order !== undefined) fields.order = config.order;
  if (config.enabled !== undefined) fields.enabled = config.enabled;
  if (config.description !== undefined) fields.description = config.description;
  if (config.match_action !== undefined) fields.match_action = config.match_action;
  copySettings(config, fields);
  const fieldSources: ConfigItem["fieldSources"] = {};
  for (const field of CONFIG_FIELDS) {
    if (config[field] !== undefined) fieldSources[field] = at(`${pointer}/${field}`, "value");
  }
  const item: ConfigItem = { fields, source: at(pointer, "value"), fieldSources };
  if (config.id !== undefined) item.id = config.id;
  return item;
}

function readOverride(
  name: string,
  override: ManifestConfigOverride,
  pointer: string,
  at: Locate,
): OverrideItem {
  const item: OverrideItem = { name, source: at(pointer, "key"), fields: {}, fieldSources: {} };
  if (override.plugin !== undefined) item.fields.plugin = override.plugin;
  if (override.order !== undefined) item.fields.order = override.order;
  if (override.enabled !== undefined) item.fields.enabled = override.enabled;
  if (override.description !== undefined) item.fields.description = override.description;
  if (override.match_action !== undefined) item.fields.match_action = override.match_action;
  copySettings(override, item.fields);
  if (override.id !== undefined) item.id = override.id;
  for (const field of OVERRIDE_FIELDS) {
    if (override[field] !== undefined) item.fieldSources[field] = at(`${pointer}/${field}`, "value");
  }
  return item;
}

/** The safety keys of a config or an override, as written. */
function copySettings(
  from: Pick<ManifestConfigOverride, (typeof SETTINGS)[number]>,
  to: Pick<DesiredFields, (typeof SETTINGS)[number]>,
): void {
  if (from.deleted !== undefined) to.deleted = from.deleted;
  if (from.protect !== undefined) to.protect = from.protect;
  if (from.ignore_fields !== undefined) to.ignore_fields = [...from.ignore_fields];
}
