// Factors the configs that exported projects share into templates (the fleet syntax of the
// manifest): pure. Expanding the result gives each project exactly the configs it was exported with.

import { FAMILY_NAMES, type FamilyName, familyKey } from "../families.js";
import { groupBy } from "../group-by.js";
import { compareText } from "../manifest/compare-projects.js";
import type { ExportedConfig, ExportedFamily, ExportResult } from "./build-manifest.js";

/** Configs that the same projects share, per family; never pinned by `id:`. */
interface ExportedTemplate {
  name: string;
  families: ExportedFamily[];
}

interface FactoredProject {
  project: string;
  use: string[];
  /** Its own configs; a family whose every config comes from templates is left out. */
  families: ExportedFamily[];
}

export interface FactoredExport {
  templates: ExportedTemplate[];
  projects: FactoredProject[];
}

interface Entry {
  project: string;
  family: FamilyName;
  /** With its order as the server has it, written or not. */
  config: ExportedConfig & { order: number };
  /** Equal for configs with equal managed fields (order included) in the same family. */
  key: string;
}

function keyOf(family: FamilyName, config: ExportedConfig & { order: number }): string {
  return JSON.stringify([
    family,
    config.name,
    config.plugin,
    config.enabled,
    config.description ?? null,
    config.match_action ?? null,
    config.order,
  ]);
}

function entriesOf(result: ExportResult): Entry[] {
  return result.families.flatMap(({ family, configs }) =>
    configs.map((config, index) => {
      const ordered = { ...config, order: config.order ?? index + 1 };
      return { project: result.project, family, config: ordered, key: keyOf(family, ordered) };
    }),
  );
}

function byOrderThenName(a: Entry, b: Entry): number {
  return a.config.order - b.config.order || compareText(a.config.name, b.config.name);
}

interface Group {
  /** shared-1, shared-2, ...: in the order templates are written and used. */
  name: string;
  projects: string[];
  /** One entry per shared config (the first project's), by family. */
  entries: Entry[];
  sortKey: string;
  /** In FAMILY_NAMES order, worked out once for the sort. */
  lowestOrders: number[];
}

function compareGroups(a: Group, b: Group): number {
  for (let index = 0; index < a.lowestOrders.length; index++) {
    const difference = (a.lowestOrders[index] ?? 0) - (b.lowestOrders[index] ?? 0);
    if (difference !== 0 && !Number.isNaN(difference)) return difference;
  }
  return compareText(a.sortKey, b.sortKey);
}

/**
 * Configs with identical managed fields, order included, shared by the same two or more projects
 * become one template (overriding each order would be about as long as writing the config out).
 */
export function factorTemplates(results: readonly ExportResult[]): FactoredExport {
  const entries = results.flatMap(entriesOf);
  const sharable = groupBy(
    entries.filter((entry) => entry.config.id === undefined),
    (entry) => entry.key,
  );
  const groupsBySet = new Map<string, Group>();
  const groupOfKey = new Map<string, Group>();
  for (const entry of entries) {
    // A pinned config is no template's (an id belongs to one project), even where others share its fields.
    if (entry.config.id !== undefined || groupOfKey.has(entry.key)) continue;
    const projects = sharable.get(entry.key)?.map((shared) => shared.project) ?? [];
    if (projects.length < 2) continue;
    // Project ids hold no NUL: the joined list names the set unambiguously.
    const set = projects.join("\u0000");
    const group = groupsBySet.get(set) ?? { name: "", projects, entries: [], sortKey: "", lowestOrders: [] };
    groupsBySet.set(set, group);
    group.entries.push(entry);
    groupOfKey.set(entry.key, group);
  }
  const groups = [...groupsBySet.values()];
  for (const group of groups) {
    group.entries.sort(
      (a, b) => FAMILY_NAMES.indexOf(a.family) - FAMILY_NAMES.indexOf(b.family) || byOrderThenName(a, b),
    );
    group.sortKey = group.entries.map((entry) => entry.key).join("\n");
    // Sorted so, a family's first entry has its lowest order (none: infinity).
    group.lowestOrders = FAMILY_NAMES.map(
      (family) =>
        group.entries.find((entry) => entry.family === family)?.config.order ?? Number.POSITIVE_INFINITY,
    );
  }
  groups.sort(compareGroups);
  for (const [index, group] of groups.entries()) group.name = `shared-${index + 1}`;

  const uses = new Map<string, Group[]>(results.map((result) => [result.project, []]));
  for (const group of groups) for (const project of group.projects) uses.get(project)?.push(group);
  const own = groupBy(
    entries.filter((entry) => entry.config.id !== undefined || !groupOfKey.has(entry.key)),
    (entry) => familyKey(entry.project, entry.family),
  );
  for (const list of own.values()) list.sort(byOrderThenName);
  const ownOf = (project: string, family: FamilyName) => own.get(familyKey(project, family)) ?? [];
  const templatedOf = (group: Group, family: FamilyName) =>
    group.entries.filter((entry) => entry.family === family);

  const ordered = decideExplicitOrders(results, { uses, ownOf, templatedOf });
  const write = (entry: Entry, withOrder: boolean): ExportedConfig => {
    const { order, ...fields } = entry.config;
    return withOrder ? { ...fields, order } : fields;
  };

  const templates = groups.map((group) => ({
    name: group.name,
    families: FAMILY_NAMES.flatMap((family) => {
      const configs = templatedOf(group, family);
      if (configs.length === 0) return [];
      const withOrder = ordered.templates.has(familyKey(group.name, family));
      return [{ family, configs: configs.map((entry) => write(entry, withOrder)) }];
    }),
  }));
  const projects = results.map((result) => {
    const used = uses.get(result.project) ?? [];
    return {
      project: result.project,
      use: used.map((group) => group.name),
      families: result.families.flatMap(({ family }) => {
        const configs = ownOf(result.project, family);
        // A project that uses no template keeps its (possibly empty) families, as written out.
        if (configs.length === 0 && used.length > 0) return [];
        const withOrder = ordered.projects.has(familyKey(result.project, family));
        return [{ family, configs: configs.map((entry) => write(entry, withOrder)) }];
      }),
    };
  });
  return { templates, projects };
}

interface Layout {
  uses: Map<string, Group[]>;
  ownOf: (project: string, family: FamilyName) => Entry[];
  templatedOf: (group: Group, family: FamilyName) => Entry[];
}

/**
 * Which project and template families write `order:` (the server's). The loader refuses a mix of written
 * orders and list positions, so a project family whose expansion is not in server order at positions
 * 1, 2, ... writes orders, and so does every template it uses, and every project using one of those.
 */
function decideExplicitOrders(
  results: readonly ExportResult[],
  { uses, ownOf, templatedOf }: Layout,
): { projects: Set<string>; templates: Set<string> } {
  const projects = new Set<string>();
  const templates = new Set<string>();
  const projectFamilies = results.flatMap((result) => {
    const used = uses.get(result.project) ?? [];
    return result.families.map(({ family }) => {
      const key = familyKey(result.project, family);
      const expanded = [
        ...used.flatMap((group) => templatedOf(group, family)),
        ...ownOf(result.project, family),
      ];
      if (!expanded.every((entry, index) => entry.config.order === index + 1)) projects.add(key);
      const templateKeys = used
        .filter((group) => templatedOf(group, family).length > 0)
        .map((group) => familyKey(group.name, family));
      return { key, templateKeys };
    });
  });
  // Until a pass adds nothing.
  for (let before = -1; before < projects.size + templates.size; ) {
    before = projects.size + templates.size;
    for (const { key, templateKeys } of projectFamilies) {
      if (!projects.has(key) && !templateKeys.some((templateKey) => templates.has(templateKey))) continue;
      projects.add(key);
      for (const templateKey of templateKeys) templates.add(templateKey);
    }
  }
  return { projects, templates };
}
