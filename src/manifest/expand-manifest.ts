// Expands templates and project sets into the planner's DesiredFamily records: per project and
// family, the configs of each used template (the sets' `use` first, then the project's), the
// overrides and omissions, then own configs; the result is what the same configs written out give.
// Linear in the size of the result: every template config is visited once per project using it.

import { FAMILY_NAMES } from "../families.js";
import { compareProjects } from "./compare-projects.js";
import { formatSource, type ManifestDiagnostic } from "./diagnostics.js";
import { applicationsOf, expandFamily, type ProjectContext, usesUnknownTemplate } from "./expand-family.js";
import type {
  LoadedManifest,
  ManifestBlocks,
  NamedPlace,
  ProjectBlock,
  TemplateBlock,
} from "./expand-types.js";
import { ANY_PROJECT, Reporter } from "./expansion-report.js";
import { hasUnresolvedSets, resolveCurrent, setMembership } from "./project-sets.js";
import { didYouMean } from "./suggest.js";
import type { DesiredFamily, DesiredState, SourceLocation } from "./types.js";

export interface ExpandResult {
  families: DesiredFamily[];
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
  /** The warnings that only the project listing can give (also in `warnings`). */
  listingWarnings: ManifestDiagnostic[];
}

/**
 * Expands the merged blocks of every file. `visibleProjects` is what `projects: all` stands for:
 * the project listing at plan time; undefined (offline) means the projects the manifest names.
 */
export function expandManifest(blocks: ManifestBlocks, visibleProjects?: readonly string[]): ExpandResult {
  const report = new Reporter();
  const templates = indexTemplates(blocks.templates, report);
  checkUseEntries(blocks, templates, report);
  const projects = mergeProjectBlocks(blocks.projects, report);
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
    report,
  );

  const ids = [...new Set([...projects.keys(), ...membership.keys()])].sort(compareProjects);
  const families: DesiredFamily[] = [];
  for (const project of ids) {
    const base = {
      project,
      block: projects.get(project),
      sets: membership.get(project) ?? [],
      templates,
      report,
    };
    // Per project, not per family: the same templates apply to both.
    const context: ProjectContext = {
      ...base,
      applications: applicationsOf(base),
      usesUnknownTemplate: usesUnknownTemplate(base),
    };
    for (const family of FAMILY_NAMES) {
      const expanded = expandFamily(context, family);
      if (expanded !== undefined && project !== ANY_PROJECT) families.push(expanded);
    }
  }
  report.finishWarnings();
  return {
    families,
    errors: report.errors(),
    warnings: report.warnings,
    listingWarnings: report.listingWarnings,
  };
}

/**
 * The desired state with `projects: all` resolved: `visibleProjects` is the project listing of the
 * API key (at plan time). Problems that arise only for a listed project come back as diagnostics.
 */
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

/** Templates by name: each defined once (across the files). */
function indexTemplates(templates: readonly TemplateBlock[], report: Reporter): Map<string, TemplateBlock> {
  const byName = new Map<string, TemplateBlock>();
  for (const template of templates) {
    const first = byName.get(template.name);
    if (first !== undefined) {
      report.error(
        template.source,
        `template "${template.name}" is also defined at ${formatSource(first.source)}; define each template once (rename one of them)`,
      );
      continue;
    }
    byName.set(template.name, template);
    if (template.families.length === 0) {
      report.warn(
        template.source,
        `template "${template.name}" provides no family; using it changes nothing`,
      );
    }
  }
  return byName;
}

/** `use:` entries name a template, once per list. */
function checkUseEntries(
  blocks: ManifestBlocks,
  templates: ReadonlyMap<string, TemplateBlock>,
  report: Reporter,
) {
  const names = [...templates.keys()];
  const check = (use: readonly NamedPlace[], owner: string) => {
    const seen = new Map<string, SourceLocation>();
    for (const entry of use) {
      if (!templates.has(entry.name)) {
        const known = names.length === 0 ? "; define it under `templates:`" : didYouMean(entry.name, names);
        report.error(
          entry.source,
          `unknown template "${entry.name}" in ${owner}${known || `; the templates are: ${names.map((name) => `"${name}"`).join(", ")}`}`,
        );
      }
      const first = seen.get(entry.name);
      if (first !== undefined) {
        report.error(
          entry.source,
          `template "${entry.name}" is already used by ${owner} at ${formatSource(first)}; use a template once`,
        );
      } else seen.set(entry.name, entry.source);
    }
  };
  for (const set of blocks.sets) check(set.use, `project set "${set.label}"`);
  for (const project of blocks.projects) check(project.use, `project "${project.project}"`);
}

/** One project's blocks of every file as one (each family in one file: merge.ts checks that). */
function mergeProjectBlocks(blocks: readonly ProjectBlock[], report: Reporter): Map<string, ProjectBlock> {
  const merged = new Map<string, ProjectBlock>();
  for (const block of blocks) {
    const first = merged.get(block.project);
    if (first === undefined) {
      merged.set(block.project, block);
      continue;
    }
    if (first.useSource !== undefined && block.useSource !== undefined) {
      report.error(
        block.useSource,
        `use of project "${block.project}" is also given at ${formatSource(first.useSource)}; list the project's templates in one place`,
      );
    }
    merged.set(block.project, {
      ...first,
      use: first.use.length > 0 ? first.use : block.use,
      ...((first.useSource ?? block.useSource) ? { useSource: first.useSource ?? block.useSource } : {}),
      families: [...first.families, ...block.families],
    });
  }
  return merged;
}
