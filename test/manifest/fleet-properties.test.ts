// Property: a manifest with templates, project sets, overrides and omissions loads to the same
// desired state, and plans the same changes against any current state, as the manifest with
// every project's configs written out (built here by a model of the documented rules).

import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { FAMILY_NAMES, type FamilyName } from "../../src/families.js";
import { type DesiredState, formatDiagnostic, loadManifestSources } from "../../src/manifest/index.js";
import { computePlan } from "../../src/plan/compute-plan.js";
import type { CurrentState, Plan } from "../../src/plan/types.js";
import { remoteRecord } from "../support/builders.js";
import { fc } from "../support/fast-check.js";

type Fields = { plugin: number; enabled?: boolean; description?: string | null; order?: number };
type Config = Fields & { name: string };

interface Fleet {
  ordered: boolean;
  templates: { families: Partial<Record<FamilyName, { prune?: boolean; configs: Config[] }>> }[];
  sets: {
    projects: string[];
    except: string[];
    use: number[];
    families: Partial<Record<FamilyName, Block>>;
  }[];
  projects: { id: string; use: number[]; families: Partial<Record<FamilyName, Block>> }[];
}

interface Block {
  prune?: boolean;
  overrides: Record<string, Partial<Fields>>;
  omit: string[];
  configs: Config[];
}

const PROJECT_IDS = ["1", "2", "3", "4", "5"];
const family = fc.constantFrom<FamilyName>(...FAMILY_NAMES);

function fieldsArbitrary(ordered: boolean): fc.Arbitrary<Fields> {
  return fc
    .record(
      {
        plugin: fc.integer({ min: 1, max: 8 }),
        enabled: fc.boolean(),
        description: fc.option(fc.constantFrom("a", "b", ""), { nil: null }),
        order: fc.integer({ min: 0, max: 20 }),
      },
      { requiredKeys: ordered ? ["plugin", "order"] : ["plugin"] },
    )
    .map((fields) => {
      if (!ordered) delete (fields as { order?: number }).order;
      return fields;
    });
}

/** Configs named `${prefix}-N`, unique across the whole manifest. */
function configsArbitrary(prefix: string, ordered: boolean, max: number): fc.Arbitrary<Config[]> {
  return fc
    .array(fieldsArbitrary(ordered), { maxLength: max })
    .map((list) => list.map((fields, index) => ({ name: `${prefix}-${index}`, ...fields })));
}

const fleetArbitrary: fc.Arbitrary<Fleet> = fc.boolean().chain((ordered) =>
  fc
    .array(
      // Templates only ever say prune: true, so two used together never disagree.
      fc.dictionary(family, fc.record({ prune: fc.option(fc.constant(true), { nil: undefined }) }), {
        minKeys: 0,
        maxKeys: 2,
      }),
      { minLength: 1, maxLength: 5 },
    )
    .chain((templateShapes) => {
      const templates = fc.tuple(
        ...templateShapes.map((shape, index) =>
          fc
            .tuple(
              ...FAMILY_NAMES.map((name) => configsArbitrary(`t${index}${name.slice(0, 2)}`, ordered, 3)),
            )
            .map((configs) => ({
              families: Object.fromEntries(
                Object.entries(shape).map(([name, { prune }]) => [
                  name,
                  {
                    ...(prune === undefined ? {} : { prune }),
                    configs: configs[FAMILY_NAMES.indexOf(name as FamilyName)] ?? [],
                  },
                ]),
              ),
            })),
        ),
      );
      // Templates are dealt to at most two sets (disjoint) and to projects (the rest), so that no
      // project gets a template twice.
      const deal = fc.array(fc.integer({ min: 0, max: 2 }), {
        minLength: templateShapes.length,
        maxLength: templateShapes.length,
      });
      return fc.record({ ordered: fc.constant(ordered), templates, deal, seed: fc.integer() });
    })
    .chain(({ ordered, templates, deal }) => {
      const setTemplates = (set: number) =>
        deal.flatMap((owner, index) => (owner === set + 1 ? [index] : []));
      const projectTemplates = deal.flatMap((owner, index) => (owner === 0 ? [index] : []));
      const templated = (uses: readonly number[], name: FamilyName) =>
        uses.flatMap((index) => templates[index]?.families[name]?.configs.map((config) => config.name) ?? []);
      const block = (prefix: string, uses: readonly number[], canOmit: boolean) =>
        fc
          .record({
            prune: fc.option(fc.boolean(), { nil: undefined }),
            picks: fc.array(fc.tuple(fc.nat(), fieldsArbitrary(ordered), fc.boolean()), { maxLength: 3 }),
            configs: configsArbitrary(prefix, ordered, 2),
          })
          .map(({ prune, picks, configs }) => (name: FamilyName): Block => {
            const names = templated(uses, name);
            const overrides: Record<string, Partial<Fields>> = {};
            const omit: string[] = [];
            for (const [pick, fields, omitIt] of picks) {
              const target = names[pick % Math.max(1, names.length)];
              if (target === undefined || target in overrides || omit.includes(target)) continue;
              if (omitIt && canOmit) omit.push(target);
              else overrides[target] = fields;
            }
            return { ...(prune === undefined ? {} : { prune }), overrides, omit, configs };
          });
      const families = (prefix: string, uses: readonly number[], canOmit: boolean) =>
        fc
          .tuple(
            fc.subarray([...FAMILY_NAMES]),
            ...FAMILY_NAMES.map((name) => block(`${prefix}${name.slice(0, 2)}`, uses, canOmit)),
          )
          .map(([names, ...blocks]) =>
            Object.fromEntries(names.map((name) => [name, blocks[FAMILY_NAMES.indexOf(name)]?.(name)])),
          ) as fc.Arbitrary<Partial<Record<FamilyName, Block>>>;
      const sets = fc.tuple(
        ...[0, 1].map((set) =>
          fc.record({
            projects: fc.subarray(PROJECT_IDS),
            except: fc.subarray(PROJECT_IDS, { maxLength: 1 }),
            use: fc.shuffledSubarray(setTemplates(set), { minLength: setTemplates(set).length }),
            // A set omits nothing (a project's override of what a set omits is an error), and only
            // the first sets prune (two sets disagreeing on it is an error).
            families: families(`s${set}`, setTemplates(set), false).map((setFamilies) => {
              if (set === 0) return setFamilies;
              for (const block of Object.values(setFamilies)) delete block.prune;
              return setFamilies;
            }),
          }),
        ),
      );
      const projects = (chosenSets: Fleet["sets"]) =>
        fc.uniqueArray(fc.constantFrom(...PROJECT_IDS), { maxLength: 4 }).chain((ids) =>
          fc.tuple(
            ...ids.map((id) =>
              fc.shuffledSubarray(projectTemplates).chain((use) => {
                // A project may override and omit what any template it gets provides.
                const fromSets = chosenSets.flatMap((set) =>
                  set.projects.includes(id) && !set.except.includes(id) ? set.use : [],
                );
                return families(`p${id}`, [...fromSets, ...use], true).map((projectFamilies) => ({
                  id,
                  use,
                  families: projectFamilies,
                }));
              }),
            ),
          ),
        );
      return sets.chain((chosenSets) =>
        projects(chosenSets).map((chosenProjects) => ({
          ordered,
          templates,
          sets: chosenSets,
          projects: chosenProjects,
        })),
      );
    }),
);

/** The fleet as YAML, with the new keys. */
function fleetYaml(fleet: Fleet): string {
  const blockYaml = (block: Block) => ({
    ...(block.prune === undefined ? {} : { prune: block.prune }),
    ...(Object.keys(block.overrides).length > 0 ? { overrides: block.overrides } : {}),
    ...(block.omit.length > 0 ? { omit: block.omit } : {}),
    configs: block.configs,
  });
  const familiesYaml = (families: Partial<Record<FamilyName, Block>>) =>
    Object.fromEntries(Object.entries(families).map(([name, block]) => [name, blockYaml(block)]));
  return stringify({
    version: 1,
    templates: Object.fromEntries(fleet.templates.map((template, index) => [`t${index}`, template.families])),
    project_sets: fleet.sets.map((set) => ({
      projects: set.projects,
      except: set.except,
      use: set.use.map((index) => `t${index}`),
      ...familiesYaml(set.families),
    })),
    projects: Object.fromEntries(
      fleet.projects.map((project) => [
        project.id,
        { use: project.use.map((index) => `t${index}`), ...familiesYaml(project.families) },
      ]),
    ),
  });
}

/** The model: each project's configs written out, by the rules README documents. */
function writtenOutYaml(fleet: Fleet): string {
  const projects: Record<string, Record<string, { prune?: boolean; configs: Config[] }>> = {};
  const ids = new Set([...fleet.projects.map((project) => project.id)]);
  for (const set of fleet.sets) for (const id of set.projects) if (!set.except.includes(id)) ids.add(id);
  for (const id of ids) {
    const own = fleet.projects.find((project) => project.id === id);
    const sets = fleet.sets.filter((set) => set.projects.includes(id) && !set.except.includes(id));
    const uses = [...sets.flatMap((set) => set.use), ...(own?.use ?? [])];
    const blocks = [...sets.map((set) => set.families), ...(own ? [own.families] : [])];
    for (const name of FAMILY_NAMES) {
      const used = uses.flatMap((index) => {
        const templateFamily = fleet.templates[index]?.families[name];
        return templateFamily === undefined ? [] : [templateFamily];
      });
      const present = blocks.map((families) => families[name]).filter((block) => block !== undefined);
      if (used.length === 0 && present.length === 0) continue;
      let configs: Config[] = used.flatMap((templateFamily) =>
        templateFamily.configs.map((config) => ({ ...config })),
      );
      for (const block of present) {
        for (const [target, fields] of Object.entries(block.overrides)) {
          configs = configs.map((config) => (config.name === target ? { ...config, ...fields } : config));
        }
        configs = configs.filter((config) => !block.omit.includes(config.name));
      }
      for (const block of present) configs.push(...block.configs);
      const prune =
        own?.families[name]?.prune ??
        present.map((block) => block.prune).find((value) => value !== undefined) ??
        used.map((templateFamily) => templateFamily.prune).find((value) => value !== undefined);
      projects[id] ??= {};
      (projects[id] as Record<string, unknown>)[name] = {
        ...(prune === undefined ? {} : { prune }),
        configs,
      };
    }
  }
  return stringify({ version: 1, projects });
}

function withoutTracing(state: DesiredState | undefined) {
  return state?.families.map((desiredFamily) => ({
    ...desiredFamily,
    source: undefined,
    projectSource: undefined,
    configs: desiredFamily.configs.map(({ fields, id }) => ({ fields, id })),
  }));
}

function withoutSources(plan: Plan | undefined) {
  return JSON.parse(
    JSON.stringify(plan ?? null, (key, value: unknown) =>
      key === "source" || key === "via"
        ? undefined
        : typeof value === "string"
          ? withoutPlaces(value)
          : value,
    ),
  ) as unknown;
}

/** Messages name the manifest line, which differs between the two forms. */
function withoutPlaces(text: string): string {
  return text.replace(/\w+\.yaml:\d+( via \w+\.yaml:\d+)?/g, "FILE:LINE");
}

/** Some records in every project + family: by name of a config (or not), with random fields. */
const currentArbitrary: fc.Arbitrary<CurrentState> = fc
  .array(
    fc.record({
      project: fc.constantFrom(...PROJECT_IDS),
      family,
      name: fc.constantFrom("t0pl-0", "t1pl-1", "t0pi-0", "p1pl-0", "s0pl-0", "other"),
      plugin: fc.integer({ min: 1, max: 8 }),
      enabled: fc.boolean(),
      order: fc.integer({ min: 0, max: 20 }),
    }),
    { maxLength: 12 },
  )
  .map((records) => {
    const families: CurrentState["families"] = [];
    records.forEach((record, index) => {
      for (const project of PROJECT_IDS)
        for (const name of FAMILY_NAMES)
          if (!families.some((each) => each.project === project && each.family === name))
            families.push({ project, family: name, records: [] });
      families
        .find((each) => each.project === record.project && each.family === record.family)
        ?.records.push(remoteRecord({ id: index + 1, ...record }));
    });
    return { families };
  });

describe("template expansion", () => {
  it("loads and plans like the manifest written out", () => {
    fc.assert(
      fc.property(fleetArbitrary, currentArbitrary, (fleet, current) => {
        const expanded = loadManifestSources([{ file: "fleet.yaml", text: fleetYaml(fleet) }]);
        const written = loadManifestSources([{ file: "written.yaml", text: writtenOutYaml(fleet) }]);
        expect(expanded.errors.map(formatDiagnostic)).toEqual([]);
        expect(written.errors.map(formatDiagnostic)).toEqual([]);
        expect(withoutTracing(expanded.value)).toEqual(withoutTracing(written.value));
        if (expanded.value === undefined || written.value === undefined) return;
        const projects = new Set(expanded.value.families.map((desiredFamily) => desiredFamily.project));
        const scoped = { families: current.families.filter((each) => projects.has(each.project)) };
        const fromFleet = computePlan(expanded.value, scoped);
        const fromWritten = computePlan(written.value, scoped);
        expect(withoutSources(fromFleet.plan)).toEqual(withoutSources(fromWritten.plan));
        expect(fromFleet.errors.map((error) => withoutPlaces(error.message))).toEqual(
          fromWritten.errors.map((error) => withoutPlaces(error.message)),
        );
      }),
      { numRuns: 60 },
    );
  });
});
