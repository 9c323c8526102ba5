// Project sets: which projects a set applies to (its list, or `projects: all` from the API key's
// listing, less its `except`), and `@current` named as the listing's first project.

import { formatSource, type ManifestDiagnostic, makeError } from "./diagnostics.js";
import type { ManifestBlocks, NamedPlace, ProjectSetBlock } from "./expand-types.js";
import type { Reporter } from "./expansion-report.js";
import type { SourceLocation } from "./types.js";

/** Whether a set says `projects: all`, to be resolved from the project listing at plan time. */
export function hasUnresolvedSets(blocks: ManifestBlocks): boolean {
  return blocks.sets.some((set) => set.projects === "all");
}

/** Project id -> the sets it is in, in set order; warns about `except` entries that exclude nothing. */
export function setMembership(
  sets: readonly ProjectSetBlock[],
  allProjects: readonly string[],
  resolved: boolean,
  report: Reporter,
): Map<string, ProjectSetBlock[]> {
  const allSet = new Set(allProjects);
  const membership = new Map<string, ProjectSetBlock[]>();
  for (const set of sets) {
    const listed = new Map<string, SourceLocation>();
    if (set.projects !== "all") {
      for (const entry of set.projects) {
        const first = listed.get(entry.name);
        if (first !== undefined) {
          report.error(
            entry.source,
            `project ${entry.name} is listed twice in project set "${set.label}" (also at ${formatSource(first)}); list it once`,
          );
        } else listed.set(entry.name, entry.source);
      }
    }
    const members = set.projects === "all" ? allProjects : [...listed.keys()];
    const excluded = new Set<string>();
    for (const entry of set.except) {
      excluded.add(entry.name);
      // With `all`, offline, the listing is unknown: nothing to check against.
      const inSet = set.projects === "all" ? !resolved || allSet.has(entry.name) : listed.has(entry.name);
      if (!inSet) {
        const message = `except: project ${entry.name} is not in project set "${set.label}"${set.projects === "all" ? " (not listed for this API key)" : ""}; it excludes nothing`;
        if (set.projects === "all") report.warnFromListing(entry.source, message);
        else report.warn(entry.source, message);
      }
    }
    for (const project of members) {
      if (excluded.has(project)) continue;
      const projectSets = membership.get(project);
      if (projectSets === undefined) membership.set(project, [set]);
      else if (projectSets.at(-1) !== set) projectSets.push(set);
    }
  }
  return membership;
}

const CURRENT_PROJECT = "@current";

/**
 * `@current` is the key's first listed project. With the listing read anyway, it becomes that id,
 * so that a project set's `projects: all` and a `"@current":` block merge like any named project
 * (rather than planning one project twice); a block naming the same id as well is an error.
 */
export function resolveCurrent(
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
