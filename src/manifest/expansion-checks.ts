// The checks of a manifest's blocks that need no project: templates defined once, `use:` entries
// that name a template (once per list), and one project's blocks of every file merged into one.

import { formatSource } from "./diagnostics.js";
import type { ManifestBlocks, NamedPlace, ProjectBlock, TemplateBlock } from "./expand-types.js";
import type { Reporter } from "./expansion-report.js";
import { didYouMean } from "./suggest.js";
import type { SourceLocation } from "./types.js";

export function indexTemplates(
  templates: readonly TemplateBlock[],
  report: Reporter,
): Map<string, TemplateBlock> {
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

export function checkUseEntries(
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
export function mergeProjectBlocks(
  blocks: readonly ProjectBlock[],
  report: Reporter,
): Map<string, ProjectBlock> {
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
