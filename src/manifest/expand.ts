// Expands templates and project sets into the planner's DesiredFamily records, as the same configs
// written out would give; `projects: all` and `@current` are resolved here too, at plan time.

import { FAMILY_NAMES, type FamilyName } from "../families.js";
import { nounAndList } from "../plural.js";
import { lookAlikeKey, matchesAnyGlob } from "../record-name.js";
import { compareProjects } from "./compare-projects.js";
import { formatSource, type ManifestDiagnostic, makeError, makeWarning } from "./diagnostics.js";
import type {
  ConfigItem,
  FamilyBlock,
  LoadedManifest,
  ManifestBlocks,
  NamedPlace,
  OverrideItem,
  ProjectBlock,
  ProjectSetBlock,
  TemplateBlock,
} from "./expand-types.js";
import { didYouMean } from "./suggest.js";
import type { DesiredConfig, DesiredFamily, DesiredFields, DesiredState, SourceLocation } from "./types.js";

/** Distinct errors: one mistake in a template used by 200 projects is one error. */
const MAX_EXPANSION_ERRORS = 100;
/** The stand-in for the projects of `projects: all` offline; never a valid project id. */
const ANY_PROJECT = "*";
const PROJECTS_SHOWN = 5;
const CURRENT_PROJECT = "@current";

export interface ExpandResult {
  families: DesiredFamily[];
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
  /** Also in `warnings`. */
  listingWarnings: ManifestDiagnostic[];
}

export function hasUnresolvedSets(blocks: ManifestBlocks): boolean {
  return blocks.sets.some((set) => set.projects === "all");
}

/**
 * `visibleProjects`: what `projects: all` stands for, the project listing at plan time; undefined
 * (offline) means the projects the manifest names. Linear in the size of the result.
 */
export function expandManifest(blocks: ManifestBlocks, visibleProjects?: readonly string[]): ExpandResult {
  const problems = new Problems();
  const templates = indexTemplates(blocks.templates, problems);
  checkUseLists(blocks, templates, problems);
  const projects = mergeProjectBlocks(blocks.projects, problems);
  const explicit = new Set<string>(projects.keys());
  for (const set of blocks.sets)
    if (set.projects !== "all") for (const id of set.projects) explicit.add(id.name);
  // Offline, `all` is also expanded for a stand-in project, so that a mistake in such a set shows
  // in validate even when the manifest names none of its projects.
  const offline = visibleProjects === undefined && hasUnresolvedSets(blocks);
  const membership = setMembership(
    blocks.sets,
    visibleProjects ?? (offline ? [...explicit, ANY_PROJECT] : [...explicit]),
    visibleProjects !== undefined,
    problems,
  );

  const families: DesiredFamily[] = [];
  for (const project of [...new Set([...projects.keys(), ...membership.keys()])].sort(compareProjects)) {
    const block = projects.get(project);
    const sets = membership.get(project) ?? [];
    const uses = [...sets.flatMap((set) => set.use), ...(block?.use ?? [])];
    // Per project, not per family: the same templates apply to both.
    const context: ProjectContext = {
      project,
      block,
      sets,
      templates,
      problems,
      applications: applicationsOf(project, block, sets, templates, problems),
      usesUnknownTemplate: uses.some((use) => !templates.has(use.name)),
    };
    for (const family of FAMILY_NAMES) {
      const expanded = expandFamily(context, family);
      if (expanded !== undefined && project !== ANY_PROJECT) families.push(expanded);
    }
  }
  return {
    families,
    errors: problems.list("error"),
    warnings: problems.list("warning"),
    listingWarnings: problems.list("warning", true),
  };
}

/** `visibleProjects`: the API key's project listing, read at plan time. */
export function resolveProjectSets(
  desired: LoadedManifest,
  visibleProjects: readonly string[],
): { value: DesiredState | undefined; errors: ManifestDiagnostic[]; warnings: ManifestDiagnostic[] } {
  const { unresolved, ...resolved } = desired;
  if (unresolved === undefined) return { value: resolved, errors: [], warnings: [] };
  const current = resolveCurrent(unresolved, visibleProjects[0]);
  if (current.error !== undefined) return { value: undefined, errors: [current.error], warnings: [] };
  const expanded = expandManifest(current.blocks, visibleProjects);
  // The offline warnings were printed when the manifest was loaded; only the listing's are new.
  const warnings = expanded.listingWarnings;
  if (expanded.errors.length > 0) return { value: undefined, errors: expanded.errors, warnings };
  return { value: { ...resolved, families: expanded.families }, errors: [], warnings };
}

/**
 * `@current` (the key's first listed project) becomes that id, so that `projects: all` and a
 * `"@current":` block merge like any named project rather than planning one project twice.
 */
function resolveCurrent(
  blocks: ManifestBlocks,
  first: string | undefined,
): { blocks: ManifestBlocks; error?: ManifestDiagnostic } {
  if (first === undefined) return { blocks };
  const alias = blocks.projects.find((block) => block.project === CURRENT_PROJECT);
  const named = blocks.projects.find((block) => block.project === first);
  if (alias !== undefined && named !== undefined) {
    const message = `project "${CURRENT_PROJECT}" is project ${first} for this API key, which the manifest also defines at ${formatSource(named.source)}; keep one of the two`;
    return { blocks, error: makeError(alias.source.file, alias.source, message) };
  }
  const rename = (entry: NamedPlace): NamedPlace =>
    entry.name === CURRENT_PROJECT ? { ...entry, name: first } : entry;
  return {
    blocks: {
      ...blocks,
      projects: blocks.projects.map((block) =>
        block.project === CURRENT_PROJECT ? { ...block, project: first } : block,
      ),
      sets: blocks.sets.map((set) => ({
        ...set,
        projects: set.projects === "all" ? "all" : set.projects.map(rename),
        except: set.except.map(rename),
      })),
    },
  };
}

interface Problem {
  severity: "error" | "warning";
  at: SourceLocation;
  message: string;
  /** None: a problem of the blocks as written. */
  projects: string[];
  /** An `except` of an `all` set the listing lacks. */
  fromListing: boolean;
}

/** Each once: the same one met expanding several projects names them all. */
class Problems {
  private readonly found = new Map<string, Problem>();
  /** Also those past MAX_EXPANSION_ERRORS, which are only counted. */
  private errorCount = 0;

  add(
    at: SourceLocation,
    message: string,
    project?: string,
    severity: Problem["severity"] = "error",
    fromListing = false,
  ) {
    const key = `${severity}\0${at.file}\0${at.line}\0${at.col}\0${message}`;
    const known = this.found.get(key);
    if (known !== undefined) {
      if (project !== undefined && known.projects.at(-1) !== project) known.projects.push(project);
      return;
    }
    if (severity === "error" && ++this.errorCount > MAX_EXPANSION_ERRORS) return;
    this.found.set(key, {
      severity,
      at,
      message,
      projects: project === undefined ? [] : [project],
      fromListing,
    });
  }

  list(severity: Problem["severity"], fromListing?: true): ManifestDiagnostic[] {
    const make = severity === "error" ? makeError : makeWarning;
    const listed = [...this.found.values()]
      .filter(
        (problem) => problem.severity === severity && (fromListing === undefined || problem.fromListing),
      )
      .map(({ at, message, projects }) => make(at.file, at, `${message}${forProjects(projects)}`));
    const last = listed.at(-1);
    const dropped = this.errorCount - MAX_EXPANSION_ERRORS;
    if (severity === "error" && dropped > 0 && last !== undefined)
      listed.push({ ...last, message: `${dropped} more errors not shown; fix the ones above first` });
    return listed;
  }
}

function forProjects(listed: readonly string[]): string {
  const projects = listed.map((project) => (project === ANY_PROJECT ? "any of `projects: all`" : project));
  if (projects.length === 0) return "";
  const more = projects.length > PROJECTS_SHOWN ? ` and ${projects.length - PROJECTS_SHOWN} more` : "";
  return ` (for ${nounAndList(projects.slice(0, PROJECTS_SHOWN), "project")}${more})`;
}

/** Each defined once, across the files. */
function indexTemplates(templates: readonly TemplateBlock[], problems: Problems): Map<string, TemplateBlock> {
  const byName = new Map<string, TemplateBlock>();
  for (const template of templates) {
    const first = byName.get(template.name);
    if (first !== undefined) {
      problems.add(
        template.source,
        `template "${template.name}" is also defined at ${formatSource(first.source)}; define each template once (rename one of them)`,
      );
      continue;
    }
    byName.set(template.name, template);
    if (template.families.length === 0) {
      problems.add(
        template.source,
        `template "${template.name}" provides no family; using it changes nothing`,
        undefined,
        "warning",
      );
    }
  }
  return byName;
}

function checkUseLists(
  blocks: ManifestBlocks,
  templates: ReadonlyMap<string, TemplateBlock>,
  problems: Problems,
): void {
  const names = [...templates.keys()];
  const check = (use: readonly NamedPlace[], owner: string) => {
    const seen = new Map<string, SourceLocation>();
    for (const entry of use) {
      if (!templates.has(entry.name)) {
        const known = names.length === 0 ? "; define it under `templates:`" : didYouMean(entry.name, names);
        problems.add(
          entry.source,
          `unknown template "${entry.name}" in ${owner}${known || `; the templates are: ${names.map((name) => `"${name}"`).join(", ")}`}`,
        );
      }
      const first = seen.get(entry.name);
      if (first === undefined) seen.set(entry.name, entry.source);
      else {
        problems.add(
          entry.source,
          `template "${entry.name}" is already used by ${owner} at ${formatSource(first)}; use a template once`,
        );
      }
    }
  };
  for (const set of blocks.sets) check(set.use, `project set "${set.label}"`);
  for (const project of blocks.projects) check(project.use, `project "${project.project}"`);
}

/** Each family is in one file: merge.ts checks that. */
function mergeProjectBlocks(blocks: readonly ProjectBlock[], problems: Problems): Map<string, ProjectBlock> {
  const merged = new Map<string, ProjectBlock>();
  for (const block of blocks) {
    const first = merged.get(block.project);
    if (first === undefined) {
      merged.set(block.project, block);
      continue;
    }
    if (first.useSource !== undefined && block.useSource !== undefined) {
      problems.add(
        block.useSource,
        `use of project "${block.project}" is also given at ${formatSource(first.useSource)}; list the project's templates in one place`,
      );
    }
    const useSource = first.useSource ?? block.useSource;
    merged.set(block.project, {
      ...first,
      use: first.use.length > 0 ? first.use : block.use,
      ...(useSource === undefined ? {} : { useSource }),
      families: [...first.families, ...block.families],
    });
  }
  return merged;
}

/** Project id -> the sets it is in, in set order. */
function setMembership(
  sets: readonly ProjectSetBlock[],
  allProjects: readonly string[],
  resolved: boolean,
  problems: Problems,
): Map<string, ProjectSetBlock[]> {
  const listedForKey = new Set(allProjects);
  const membership = new Map<string, ProjectSetBlock[]>();
  for (const set of sets) {
    const all = set.projects === "all";
    const listed = new Map<string, SourceLocation>();
    for (const entry of set.projects === "all" ? [] : set.projects) {
      const first = listed.get(entry.name);
      if (first === undefined) listed.set(entry.name, entry.source);
      else {
        problems.add(
          entry.source,
          `project ${entry.name} is listed twice in project set "${set.label}" (also at ${formatSource(first)}); list it once`,
        );
      }
    }
    for (const entry of set.except) {
      // With `all`, offline, the listing is unknown: nothing to check against.
      if (all ? !resolved || listedForKey.has(entry.name) : listed.has(entry.name)) continue;
      const message = `except: project ${entry.name} is not in project set "${set.label}"${all ? " (not listed for this API key)" : ""}; it excludes nothing`;
      problems.add(entry.source, message, undefined, "warning", all);
    }
    const excluded = new Set(set.except.map((entry) => entry.name));
    for (const project of all ? allProjects : listed.keys()) {
      if (excluded.has(project)) continue;
      const projectSets = membership.get(project);
      if (projectSets === undefined) membership.set(project, [set]);
      else if (projectSets.at(-1) !== set) projectSets.push(set);
    }
  }
  return membership;
}

interface ProjectContext {
  project: string;
  block: ProjectBlock | undefined;
  sets: readonly ProjectSetBlock[];
  templates: ReadonlyMap<string, TemplateBlock>;
  problems: Problems;
  /** From its sets, then its own `use`. */
  applications: readonly Application[];
  /** What the templates provide is then unknown: the checks that need it stay silent. */
  usesUnknownTemplate: boolean;
}

interface Application {
  template: TemplateBlock;
  use: NamedPlace;
}

function applicationsOf(
  project: string,
  block: ProjectBlock | undefined,
  sets: readonly ProjectSetBlock[],
  templates: ReadonlyMap<string, TemplateBlock>,
  problems: Problems,
): Application[] {
  const applications: Application[] = [];
  const seen = new Map<string, { use: NamedPlace; list: object }>();
  for (const list of [...sets, ...(block ? [block] : [])]) {
    for (const use of list.use) {
      const template = templates.get(use.name);
      if (template === undefined) continue;
      const first = seen.get(use.name);
      if (first === undefined) {
        seen.set(use.name, { use, list });
        applications.push({ template, use });
      } else if (first.list !== list) {
        // Twice in one list is reported once, statically (checkUseLists); across lists, for this project.
        problems.add(
          use.source,
          `template "${use.name}" is already applied at ${formatSource(first.use.source)}; use a template once per project`,
          project,
        );
      }
    }
  }
  return applications;
}

interface Entry {
  item: ConfigItem;
  appliedAt: SourceLocation | undefined;
  /** The block that gave it: duplicates within one block are reported as it is read. */
  origin: object;
  omittedAt?: SourceLocation;
  /** Two sets overriding one field differently is an error. */
  setOverrides?: Map<string, { value: unknown; at: SourceLocation }>;
  /** The item's own until an override changes them; then a copy. */
  fields: ConfigItem["fields"];
  fieldSources: ConfigItem["fieldSources"];
  id?: number;
}

function entryOf(item: ConfigItem, origin: object, appliedAt?: SourceLocation): Entry {
  return { item, appliedAt, origin, fields: item.fields, fieldSources: item.fieldSources };
}

function expandFamily(context: ProjectContext, family: FamilyName): DesiredFamily | undefined {
  const { project, problems } = context;
  const own = context.block?.families.find((candidate) => candidate.family === family);
  // The blocks that omit, override and add configs: the sets' first, then the project's own (which win).
  const overriding: { set: ProjectSetBlock | undefined; block: FamilyBlock }[] = [];
  for (const set of context.sets) {
    const block = set.families.find((candidate) => candidate.family === family);
    if (block !== undefined) overriding.push({ set, block });
  }
  const setCount = overriding.length;
  if (own !== undefined) overriding.push({ set: undefined, block: own });

  // The common case, a project's own configs only: as written.
  const ownOnly = own !== undefined && setCount === 0 && context.applications.length === 0;
  if (ownOnly && own.overrides.length === 0 && own.omit.length === 0) {
    if (own.configs !== undefined) {
      const entries = own.configs.map((item) => entryOf(item, own));
      return finishFamily(context, family, entries, own.prune?.value ?? false, own.source, [own]);
    }
    if (!context.usesUnknownTemplate)
      problems.add(own.valueSource, missingConfigs(family, context.templates.size > 0));
    return undefined;
  }

  const entries: Entry[] = [];
  const byName = new Map<string, Entry>();
  const add = (entry: Entry, inherited: boolean) => {
    // Keyed as the planner matches records: two configs whose names look alike would claim one record.
    const key = lookAlikeKey(entry.fields.name);
    const first = byName.get(key);
    if (first === undefined) {
      byName.set(key, entry);
      entries.push(entry);
      // Two configs of one block with one name: reported as the block was read.
    } else if (first.origin !== entry.origin) {
      const firstWhere = `${formatSource(first.item.source)}${first.appliedAt === undefined ? "" : ` via ${formatSource(first.appliedAt)}`}`;
      problems.add(
        entry.item.source,
        `config "${entry.fields.name}" is also provided at ${firstWhere}; a name identifies one config of a project + family: rename one, or omit the templated one`,
        inherited ? project : undefined,
      );
    }
  };

  let firstUse: SourceLocation | undefined;
  const settingBlocks: FamilyBlock[] = [];
  for (const application of context.applications) {
    const block = application.template.families.find((candidate) => candidate.family === family);
    if (block === undefined) continue;
    settingBlocks.push(block);
    firstUse ??= application.use.source;
    for (const item of block.configs ?? []) add(entryOf(item, application, application.use.source), true);
  }
  const templatePrune = agreedPrune(settingBlocks, `, both templates used for ${family}`, family, context);
  // Until own configs are added, every entry is a templated one: what omit and overrides may name.
  const templatedEntry = (key: "omit" | "overrides", named: NamedPlace, inherited: string | undefined) => {
    const entry = byName.get(lookAlikeKey(named.name));
    if (entry === undefined && !context.usesUnknownTemplate) {
      const message = describeUnknownTemplated(key, named.name, family, [...byName.values()]);
      problems.add(named.source, message, inherited);
    }
    return entry;
  };

  for (const { set, block } of overriding) {
    const inherited = set !== undefined ? project : undefined;
    for (const omit of block.omit) {
      const entry = templatedEntry("omit", omit, inherited);
      if (entry !== undefined) entry.omittedAt ??= omit.source;
    }
    for (const override of block.overrides) {
      const entry = templatedEntry("overrides", override, inherited);
      if (entry === undefined) continue;
      if (entry.omittedAt !== undefined) {
        const ownOmit = own?.omit.some((omit) => omit.source === entry.omittedAt) ?? false;
        problems.add(
          override.source,
          `overrides "${override.name}", which omit leaves out at ${formatSource(entry.omittedAt)}; remove one of the two`,
          inherited ?? (ownOmit ? undefined : project),
        );
      } else applyOverride(entry, override, set !== undefined, context);
    }
  }
  for (const { set, block } of overriding) {
    for (const item of block.configs ?? []) add(entryOf(item, block, set?.source), set !== undefined);
    if (block.configs === undefined && firstUse === undefined && !context.usesUnknownTemplate) {
      problems.add(
        block.valueSource,
        missingConfigs(family, context.templates.size > 0),
        set === undefined ? undefined : project,
      );
    }
  }
  const prune =
    own?.prune?.value ??
    agreedPrune(
      overriding.slice(0, setCount).map(({ block }) => block),
      " of another set with the same project",
      family,
      context,
    ) ??
    templatePrune ??
    false;
  // Neither a template nor a block of the project or its sets gives the family: nothing to expand.
  const source = own?.source ?? overriding[0]?.block.source ?? firstUse;
  if (source === undefined) return undefined;
  const kept = entries.filter((entry) => entry.omittedAt === undefined);
  for (const { block } of overriding) settingBlocks.push(block);
  return finishFamily(context, family, kept, prune, source, settingBlocks);
}

/** Of the templates (or the sets) of a family: two of them disagreeing is an error. */
function agreedPrune(
  blocks: readonly FamilyBlock[],
  others: string,
  family: FamilyName,
  context: ProjectContext,
): boolean | undefined {
  let first: { value: boolean; source: SourceLocation } | undefined;
  for (const { prune } of blocks) {
    if (prune === undefined) continue;
    if (first !== undefined && first.value !== prune.value) {
      context.problems.add(
        prune.source,
        `prune: ${prune.value} differs from prune: ${first.value} at ${formatSource(first.source)}${others}; set prune in the project's ${family} block`,
        context.project,
      );
    }
    first ??= prune;
  }
  return first?.value;
}

function applyOverride(entry: Entry, override: OverrideItem, fromSet: boolean, context: ProjectContext) {
  // The template's objects are shared by every project using it: copy before changing.
  if (entry.fields === entry.item.fields) entry.fields = copyOwn(entry.item.fields);
  if (entry.fieldSources === entry.item.fieldSources) entry.fieldSources = copyOwn(entry.item.fieldSources);
  const changes = Object.entries(override.fields) as [keyof OverrideItem["fieldSources"], unknown][];
  if (override.id !== undefined) changes.push(["id", override.id]);
  for (const [field, value] of changes) {
    const at = override.fieldSources[field] ?? override.source;
    if (fromSet) {
      entry.setOverrides ??= new Map();
      const earlier = entry.setOverrides.get(field);
      if (earlier !== undefined && !sameSetting(earlier.value, value)) {
        context.problems.add(
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
 * Not `{ ...object }`: V8 gives each object spread from these a hidden class of its own, about 300
 * bytes each; for a manifest of 400,000 configs that was 130 MB.
 */
function copyOwn<T extends object>(object: T): T {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) copy[key] = (object as Record<string, unknown>)[key];
  return copy as T;
}

function sameSetting(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : Object.is(a, b);
}

/**
 * `settingBlocks`: templates, then sets, then the project's own. Protection adds up (it must survive
 * any one block's edit); the last `fields:` and `drift:` win.
 */
function finishFamily(
  context: ProjectContext,
  family: FamilyName,
  entries: readonly Entry[],
  prune: boolean,
  source: SourceLocation,
  settingBlocks: readonly FamilyBlock[],
): DesiredFamily {
  const withOrder = entries.find((entry) => entry.fields.order !== undefined);
  const withoutOrder = entries.find((entry) => entry.fields.order === undefined);
  if (withOrder !== undefined && withoutOrder !== undefined) {
    const orderAt = withOrder.fieldSources.order ?? withOrder.item.source;
    const inherited = withOrder.appliedAt !== undefined || withoutOrder.appliedAt !== undefined;
    // Within one block it was reported as the block was read.
    if (withOrder.origin !== withoutOrder.origin || withOrder.fields !== withOrder.item.fields) {
      context.problems.add(
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
  const protect = settingBlocks.flatMap((block) => block.protect ?? []);
  const fields = settingBlocks.findLast((block) => block.fields !== undefined)?.fields?.value;
  const drift = settingBlocks.findLast((block) => block.drift !== undefined)?.drift?.value;
  const built: DesiredFamily = {
    project: context.project,
    family,
    prune,
    ...(protect.length > 0 ? { protect } : {}),
    ...(fields === undefined ? {} : { fields }),
    ...(drift === undefined ? {} : { drift }),
    explicitOrder: entries.length > 0 && withoutOrder === undefined,
    configs,
    source,
  };
  const projectSource = projectSourceOf(context);
  if (projectSource !== undefined) built.projectSource = projectSource;
  // A `protect:` pattern that names no config of the family: likely a typo (it still protects remote records).
  const names = configs.map((config) => config.fields.name);
  for (const { pattern, source: patternSource } of protect) {
    if (names.some(matchesAnyGlob([pattern]))) continue;
    context.problems.add(
      patternSource,
      `protect: "${pattern}" matches no config of ${family} (it still protects remote records of that name)${didYouMean(pattern, names) || "; check the spelling"}`,
      context.project,
      "warning",
    );
  }
  return built;
}

function projectSourceOf({ block, sets, project }: ProjectContext): SourceLocation | undefined {
  const named = sets.flatMap((set) => (set.projects === "all" ? [] : set.projects));
  return block?.source ?? named.find((place) => place.name === project)?.source;
}

/** Configs brought together at one order from different blocks; within one block it was warned of as read. */
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
    context.problems.add(
      entry.fieldSources.order ?? entry.item.source,
      `order ${order} of "${entry.fields.name}" is also the order of "${other.fields.name}" (${formatSource(otherAt)}) in ${family}; the service breaks the tie by plugin id, give distinct orders (in the template or with overrides)`,
      context.project,
      "warning",
    );
  }
}

function missingConfigs(family: FamilyName, templates: boolean): string {
  const or = templates ? `, or \`use:\` a template that provides ${family}` : "";
  return `missing required key "configs" in "${family}"; add \`configs:\` with the list of configs (\`configs: []\` for none)${or}`;
}

function describeUnknownTemplated(
  key: "omit" | "overrides",
  name: string,
  family: FamilyName,
  templated: readonly Entry[],
): string {
  const candidates = templated.map((entry) => entry.fields.name);
  if (candidates.length === 0)
    return `${key}: "${name}" names no templated config: no template used here provides ${family}`;
  const provided = candidates.slice(0, 10).map((candidate) => `"${candidate}"`);
  return `${key}: "${name}" is not a config of the templates used here${didYouMean(name, candidates) || `; they provide ${provided.join(", ")}`}`;
}
