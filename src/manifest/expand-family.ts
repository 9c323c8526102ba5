// Expands one project + family: the configs of each template the project uses (its sets' `use`
// first, then its own), the sets' and the project's omissions and overrides, then their own
// configs; orders resolved as the same configs written out would have them.

import type { FamilyName } from "../families.js";
import { lookAlikeKey, matchesAnyGlob } from "../record-name.js";
import { formatSource } from "./diagnostics.js";
import type {
  ConfigItem,
  FamilyBlock,
  NamedPlace,
  OverrideItem,
  ProjectBlock,
  ProjectSetBlock,
  TemplateBlock,
} from "./expand-types.js";
import type { Reporter } from "./expansion-report.js";
import { didYouMean } from "./suggest.js";
import type { DesiredConfig, DesiredFamily, DesiredFields, SourceLocation } from "./types.js";

export interface ProjectContext {
  project: string;
  block: ProjectBlock | undefined;
  sets: readonly ProjectSetBlock[];
  templates: ReadonlyMap<string, TemplateBlock>;
  report: Reporter;
  /** The templates applied to the project, in order: from its sets, then its own `use`. */
  applications: readonly Application[];
  /**
   * Whether a `use:` of the project or its sets names no template (reported once, statically):
   * what the templates provide is then unknown, so the checks that need it stay silent.
   */
  usesUnknownTemplate: boolean;
}

/** A config on its way into the expanded list. */
interface Entry {
  item: ConfigItem;
  appliedAt: SourceLocation | undefined;
  /** Which block gave it (a template use, a set's or the project's own configs): duplicates within one block are the semantic checks'. */
  origin: object;
  /** Whether it came from a template (only those can be overridden or omitted). */
  templated: boolean;
  omittedAt?: SourceLocation;
  /** For each field a set overrides: where, and the value (two sets disagreeing is an error). */
  setOverrides?: Map<string, { value: unknown; at: SourceLocation }>;
  fields: ConfigItem["fields"];
  fieldSources: ConfigItem["fieldSources"];
  id?: number;
}

interface Application {
  template: TemplateBlock;
  use: NamedPlace;
  /** The set whose `use:` applied it, if any. */
  set?: ProjectSetBlock;
}

export function expandFamily(context: ProjectContext, family: FamilyName): DesiredFamily | undefined {
  const { project, block, sets, report } = context;
  const own = block?.families.find((candidate) => candidate.family === family);
  const setBlocks: { set: ProjectSetBlock; block: FamilyBlock }[] = [];
  for (const set of sets) {
    const setBlock = set.families.find((candidate) => candidate.family === family);
    if (setBlock !== undefined) setBlocks.push({ set, block: setBlock });
  }
  const { applications } = context;

  // The common case, a project's own configs only: as written.
  if (applications.length === 0 && setBlocks.length === 0) {
    if (own === undefined) return undefined;
    if (own.overrides.length === 0 && own.omit.length === 0) {
      if (own.configs === undefined) {
        if (!context.usesUnknownTemplate)
          report.error(own.valueSource, missingConfigs(family, context.templates.size > 0));
        return undefined;
      }
      return finishFamily(
        context,
        family,
        own.configs.map((item) => entryOf(item, own, false)),
        own.prune?.value ?? false,
        own.source,
        familySettings([own]),
      );
    }
  }

  const entries: Entry[] = [];
  const byName = new Map<string, Entry>();
  let templatePrune: { value: boolean; source: SourceLocation } | undefined;
  let templated = false;
  let firstUse: SourceLocation | undefined;
  const settingBlocks: FamilyBlock[] = [];
  for (const application of applications) {
    const templateFamily = application.template.families.find((candidate) => candidate.family === family);
    if (templateFamily === undefined) continue;
    settingBlocks.push(templateFamily);
    templated = true;
    firstUse ??= application.use.source;
    if (templateFamily.prune !== undefined) {
      if (templatePrune !== undefined && templatePrune.value !== templateFamily.prune.value) {
        report.error(
          templateFamily.prune.source,
          `prune: ${templateFamily.prune.value} differs from prune: ${templatePrune.value} at ${formatSource(templatePrune.source)}, both templates used for ${family}; set prune in the project's ${family} block`,
          project,
        );
      } else templatePrune ??= templateFamily.prune;
    }
    for (const item of templateFamily.configs ?? []) {
      addEntry(entries, byName, context, entryOf(item, application, true, application.use.source), true);
    }
  }

  // Omissions and overrides: the sets' first, then the project's own (which win).
  const overridingBlocks: { set: ProjectSetBlock | undefined; block: FamilyBlock }[] = [
    ...setBlocks,
    ...(own ? [{ set: undefined, block: own }] : []),
  ];
  for (const { set, block: overriding } of overridingBlocks) {
    const inherited = set !== undefined ? project : undefined;
    for (const omit of overriding.omit) {
      const entry = byName.get(lookAlikeKey(omit.name));
      if (entry === undefined || !entry.templated) {
        if (!context.usesUnknownTemplate)
          report.error(omit.source, unknownTemplated("omit", omit.name, family, byName), inherited);
        continue;
      }
      entry.omittedAt ??= omit.source;
    }
    for (const override of overriding.overrides) {
      const entry = byName.get(lookAlikeKey(override.name));
      if (entry === undefined || !entry.templated) {
        if (!context.usesUnknownTemplate) {
          report.error(
            override.source,
            unknownTemplated("overrides", override.name, family, byName),
            inherited,
          );
        }
        continue;
      }
      if (entry.omittedAt !== undefined) {
        report.error(
          override.source,
          `overrides "${override.name}", which omit leaves out at ${formatSource(entry.omittedAt)}; remove one of the two`,
          inherited ?? (isOwnPlace(entry.omittedAt, own) ? undefined : project),
        );
        continue;
      }
      applyOverride(entry, override, set, context);
    }
  }

  // Own configs: the sets' first, then the project's.
  for (const { set, block: overriding } of overridingBlocks) {
    for (const item of overriding.configs ?? []) {
      addEntry(entries, byName, context, entryOf(item, overriding, false, set?.source), set !== undefined);
    }
    if (overriding.configs === undefined && !templated && !context.usesUnknownTemplate) {
      report.error(
        overriding.valueSource,
        missingConfigs(family, true),
        set === undefined ? undefined : project,
      );
    }
  }
  if (entries.length === 0 && !templated && overridingBlocks.length === 0) return undefined;

  const prune = own?.prune?.value ?? setPrune(setBlocks, family, context) ?? templatePrune?.value ?? false;
  const source = own?.source ?? setBlocks[0]?.block.source ?? firstUse ?? context.block?.source;
  if (source === undefined) return undefined;
  const kept = entries.filter((entry) => entry.omittedAt === undefined);
  for (const { block: overriding } of overridingBlocks) settingBlocks.push(overriding);
  return finishFamily(context, family, kept, prune, source, familySettings(settingBlocks));
}

/**
 * `protect:`, `fields:` and `drift:` of a family from its blocks, templates first, then sets, then the
 * project's own: protection adds up (it must survive any one block's edit); the last `fields:` wins.
 */
function familySettings(blocks: readonly FamilyBlock[]): Pick<DesiredFamily, "protect" | "fields" | "drift"> {
  const protect = blocks.flatMap((block) => block.protect ?? []);
  const fields = blocks.findLast((block) => block.fields !== undefined)?.fields?.value;
  // `drift:` as `fields:`: the project's own, else a set's, else a template's.
  const drift = blocks.findLast((block) => block.drift !== undefined)?.drift?.value;
  return {
    ...(protect.length > 0 ? { protect } : {}),
    ...(fields === undefined ? {} : { fields }),
    ...(drift === undefined ? {} : { drift }),
  };
}

/** A `protect:` pattern that names no config of the family: likely a typo (it still protects remote records). */
function warnUnmatchedProtect(context: ProjectContext, family: FamilyName, built: DesiredFamily): void {
  for (const { pattern, source } of built.protect ?? []) {
    const names = built.configs.map((config) => config.fields.name);
    if (names.some(matchesAnyGlob([pattern]))) continue;
    const suggestion = didYouMean(pattern, names);
    context.report.warn(
      source,
      `protect: "${pattern}" matches no config of ${family} (it still protects remote records of that name)${suggestion || "; check the spelling"}`,
      context.project,
    );
  }
}

/** Whether the project or one of its sets `use:`s a name that is no template. */
export function usesUnknownTemplate(context: Pick<ProjectContext, "block" | "sets" | "templates">): boolean {
  const uses = [...context.sets.flatMap((set) => set.use), ...(context.block?.use ?? [])];
  return uses.some((use) => !context.templates.has(use.name));
}

export function applicationsOf(
  context: Omit<ProjectContext, "applications" | "usesUnknownTemplate">,
): Application[] {
  const applications: Application[] = [];
  const seen = new Map<string, { use: NamedPlace; list: object }>();
  const add = (use: NamedPlace, list: object, set: ProjectSetBlock | undefined) => {
    const template = context.templates.get(use.name);
    if (template === undefined) return;
    const first = seen.get(use.name);
    if (first !== undefined) {
      // Twice in one list is reported once, statically (checkUseEntries); across lists, for this project.
      if (first.list !== list) {
        context.report.error(
          use.source,
          `template "${use.name}" is already applied at ${formatSource(first.use.source)}; use a template once per project`,
          context.project,
        );
      }
      return;
    }
    seen.set(use.name, { use, list });
    applications.push(set === undefined ? { template, use } : { template, use, set });
  };
  for (const set of context.sets) for (const use of set.use) add(use, set, set);
  const block = context.block;
  if (block !== undefined) for (const use of block.use) add(use, block, undefined);
  return applications;
}

function addEntry(
  entries: Entry[],
  byName: Map<string, Entry>,
  context: ProjectContext,
  entry: Entry,
  inherited: boolean,
): void {
  const name = entry.fields.name;
  // Keyed as the planner matches records: two configs whose names look alike would claim one record.
  const key = lookAlikeKey(name);
  const first = byName.get(key);
  if (first === undefined) {
    byName.set(key, entry);
    entries.push(entry);
    return;
  }
  // Two configs of one block with one name: the semantic checks already said so.
  if (first.origin === entry.origin) return;
  const firstWhere =
    first.appliedAt === undefined
      ? formatSource(first.item.source)
      : `${formatSource(first.item.source)} via ${formatSource(first.appliedAt)}`;
  context.report.error(
    entry.item.source,
    `config "${name}" is also provided at ${firstWhere}; a name identifies one config of a project + family: rename one, or omit the templated one`,
    inherited ? context.project : undefined,
  );
}

function applyOverride(
  entry: Entry,
  override: OverrideItem,
  set: ProjectSetBlock | undefined,
  context: ProjectContext,
) {
  // The template's objects are shared by every project using it: copy before changing.
  if (entry.fields === entry.item.fields) entry.fields = copyOwn(entry.item.fields);
  if (entry.fieldSources === entry.item.fieldSources) entry.fieldSources = copyOwn(entry.item.fieldSources);
  const changes: [keyof OverrideItem["fieldSources"], unknown][] = Object.entries(override.fields) as [
    keyof OverrideItem["fieldSources"],
    unknown,
  ][];
  if (override.id !== undefined) changes.push(["id", override.id]);
  for (const [field, value] of changes) {
    const at = override.fieldSources[field] ?? override.source;
    if (set !== undefined) {
      entry.setOverrides ??= new Map();
      const earlier = entry.setOverrides.get(field);
      if (earlier !== undefined && !sameSetting(earlier.value, value)) {
        context.report.error(
          at,
          `${field}: ${JSON.stringify(value)} for "${override.name}" differs from ${JSON.stringify(earlier.value)} at ${formatSource(earlier.at)} of another set with the same project; set it in the project's own overrides`,
          context.project,
        );
        continue;
      }
      entry.setOverrides.set(field, { value, at });
    }
    if (field === "id") entry.id = value as number;
    else (entry.fields as Record<string, unknown>)[field] = value;
    entry.fieldSources[field] = at;
  }
}

/**
 * A copy with the same keys in the same order, made key by key. Not `{ ...object }`: V8 gives each
 * object spread from these (their keys were added one by one, some of them optional) a hidden
 * class of its own, about 300 bytes each; for a manifest of 400,000 configs that was 130 MB.
 */
function copyOwn<T extends object>(object: T): T {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) copy[key] = (object as Record<string, unknown>)[key];
  return copy as T;
}

/** Two sets' values of one override field agree: equal values, or lists of the same items. */
function sameSetting(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : Object.is(a, b);
}

function setPrune(
  setBlocks: readonly { set: ProjectSetBlock; block: FamilyBlock }[],
  family: FamilyName,
  context: ProjectContext,
): boolean | undefined {
  let first: { value: boolean; source: SourceLocation } | undefined;
  for (const { block } of setBlocks) {
    if (block.prune === undefined) continue;
    if (first !== undefined && first.value !== block.prune.value) {
      context.report.error(
        block.prune.source,
        `prune: ${block.prune.value} differs from prune: ${first.value} at ${formatSource(first.source)} of another set with the same project; set prune in the project's ${family} block`,
        context.project,
      );
    }
    first ??= block.prune;
  }
  return first?.value;
}

/** Where the manifest names the project: its key under `projects:`, else its entry in a set's list. */
function projectSourceOf(context: ProjectContext): SourceLocation | undefined {
  if (context.block !== undefined) return context.block.source;
  for (const set of context.sets) {
    if (set.projects === "all") continue;
    const named = set.projects.find((place) => place.name === context.project);
    if (named !== undefined) return named.source;
  }
  return undefined;
}

/** Resolves orders (all given, or none: list positions; a mix is an error) and builds the family. */
function finishFamily(
  context: ProjectContext,
  family: FamilyName,
  entries: readonly Entry[],
  prune: boolean,
  source: SourceLocation,
  settings: Pick<DesiredFamily, "protect" | "fields">,
): DesiredFamily {
  let withOrder: Entry | undefined;
  let withoutOrder: Entry | undefined;
  for (const entry of entries) {
    if (entry.fields.order === undefined) withoutOrder ??= entry;
    else withOrder ??= entry;
  }
  if (withOrder !== undefined && withoutOrder !== undefined) {
    const orderAt = withOrder.fieldSources.order ?? withOrder.item.source;
    const inherited = withOrder.appliedAt !== undefined || withoutOrder.appliedAt !== undefined;
    // Within one block the semantic checks said it already.
    if (withOrder.origin !== withoutOrder.origin || withOrder.fields !== withOrder.item.fields) {
      context.report.error(
        withoutOrder.item.source,
        `"${withoutOrder.fields.name}" has no order, but "${withOrder.fields.name}" has one (${formatSource(orderAt)}); in ${family} give every config of the project an order (in the template or with overrides), or none`,
        inherited ? context.project : undefined,
      );
    }
  }
  if (withOrder !== undefined && withoutOrder === undefined) warnSharedOrders(context, family, entries);
  // A config with `deleted: true` takes no place in the list: the others keep their positions.
  let position = 0;
  const configs = entries.map((entry): DesiredConfig => {
    if (entry.fields.deleted !== true) position += 1;
    const fields = copyOwn(entry.fields) as DesiredFields;
    fields.order = entry.fields.order ?? position;
    const config: DesiredConfig = { fields, source: entry.item.source, fieldSources: entry.fieldSources };
    const id = entry.id ?? entry.item.id;
    if (id !== undefined) config.id = id;
    if (entry.appliedAt !== undefined) config.appliedAt = entry.appliedAt;
    return config;
  });
  const built: DesiredFamily = {
    project: context.project,
    family,
    prune,
    ...settings,
    explicitOrder: entries.length > 0 && withoutOrder === undefined,
    configs,
    source,
  };
  const projectSource = projectSourceOf(context);
  if (projectSource !== undefined) built.projectSource = projectSource;
  warnUnmatchedProtect(context, family, built);
  return built;
}

/**
 * Two configs of one project + family at one order, brought together from different blocks (a
 * template and the project's own configs, two templates, an override): within one block as written
 * the semantic checks warned already.
 */
function warnSharedOrders(context: ProjectContext, family: FamilyName, entries: readonly Entry[]): void {
  const byOrder = new Map<number, Entry>();
  const asWritten = (entry: Entry) => entry.fields === entry.item.fields;
  for (const entry of entries) {
    const order = entry.fields.order;
    if (order === undefined) continue;
    const other = byOrder.get(order);
    if (other === undefined) {
      byOrder.set(order, entry);
      continue;
    }
    if (other.origin === entry.origin && asWritten(entry) && asWritten(other)) continue;
    const otherAt = other.fieldSources.order ?? other.item.source;
    context.report.warn(
      entry.fieldSources.order ?? entry.item.source,
      `order ${order} of "${entry.fields.name}" is also the order of "${other.fields.name}" (${formatSource(otherAt)}) in ${family}; the service breaks the tie by plugin id, give distinct orders (in the template or with overrides)`,
      context.project,
    );
  }
}

/** A config as written, from the block (or template use) `origin`; `appliedAt` for a template's or a set's. */
function entryOf(item: ConfigItem, origin: object, templated: boolean, appliedAt?: SourceLocation): Entry {
  return { item, appliedAt, origin, templated, fields: item.fields, fieldSources: item.fieldSources };
}

function isOwnPlace(at: SourceLocation, own: FamilyBlock | undefined): boolean {
  return own?.omit.some((entry) => entry.source === at) ?? false;
}

function missingConfigs(family: FamilyName, templates: boolean): string {
  const or = templates ? `, or \`use:\` a template that provides ${family}` : "";
  return `missing required key "configs" in "${family}"; add \`configs:\` with the list of configs (\`configs: []\` for none)${or}`;
}

function unknownTemplated(
  key: "omit" | "overrides",
  name: string,
  family: FamilyName,
  byName: ReadonlyMap<string, Entry>,
): string {
  const candidates = [...byName.values()]
    .filter((entry) => entry.templated)
    .map((entry) => entry.fields.name);
  if (candidates.length === 0) {
    return `${key}: "${name}" names no templated config: no template used here provides ${family}`;
  }
  const suggestion = didYouMean(name, candidates);
  return `${key}: "${name}" is not a config of the templates used here${
    suggestion ||
    `; they provide ${candidates
      .slice(0, 10)
      .map((candidate) => `"${candidate}"`)
      .join(", ")}`
  }`;
}
