import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildManifest, type ExportResult } from "../../src/export/build-manifest.js";
import { type FactoredExport, factorTemplates } from "../../src/export/factor-templates.js";
import { renderNewManifest, renderTemplatedManifest } from "../../src/export/update-manifest.js";
import type { PluginConfigRecord } from "../../src/wire-types.js";
import { remoteRecord } from "../support/builders.js";
import { FE, PC } from "../support/families.js";

let nextId = 1;

/** A record of a project's list; ids are unique across the test, as the service's are. */
function record(
  name: string | null,
  plugin: number,
  order: number,
  fields: Partial<PluginConfigRecord> = {},
) {
  return remoteRecord({ id: nextId++, name, plugin, order, enabled: true, ...fields });
}

/** What export writes for a record with no description and no match action: every field, nulls too. */
const NULLS = { description: null, match_action: null };

function exported(
  project: string,
  pluginConfigs: PluginConfigRecord[],
  frontendApps: PluginConfigRecord[] = [],
): ExportResult {
  return buildManifest({
    project,
    families: [
      { family: PC, records: pluginConfigs },
      { family: FE, records: frontendApps },
    ],
  });
}

/** Ten configs in positions 1..10, the same in every project that calls it. */
function tenConfigs(): PluginConfigRecord[] {
  return Array.from({ length: 10 }, (_, index) =>
    record(`Config ${index + 1}`, index + 1, index + 1, { description: `Step ${index + 1} of the pipeline` }),
  );
}

/** The names a project's expansion lists per family, and whether each carries `order`. */
function expansionOf(factored: FactoredExport, project: string, family: string) {
  const block = factored.projects.find((candidate) => candidate.project === project);
  if (!block) throw new Error(`no project ${project}`);
  const fromTemplates = block.use.flatMap(
    (name) =>
      factored.templates
        .find((template) => template.name === name)
        ?.families.find((item) => item.family === family)?.configs ?? [],
  );
  const own = block.families.find((item) => item.family === family)?.configs ?? [];
  return [...fromTemplates, ...own].map((config) => [config.name, config.order ?? null]);
}

describe("factorTemplates", () => {
  it("20 projects with the same 10 configs: one template, and a third of the written-out size or less", () => {
    const results = Array.from({ length: 20 }, (_, index) => exported(String(index + 1), tenConfigs()));
    const factored = factorTemplates(results);
    expect(factored.templates.map((template) => template.name)).toEqual(["shared-1"]);
    expect(factored.templates[0]?.families).toEqual([
      { family: PC, configs: results[0]?.families[0]?.configs },
    ]);
    for (const project of factored.projects)
      expect(project).toMatchObject({ use: ["shared-1"], families: [] });

    const writtenOut = Buffer.byteLength(renderNewManifest(results));
    const templated = Buffer.byteLength(renderTemplatedManifest(factored, results));
    expect(templated * 3).toBeLessThanOrEqual(writtenOut);
  });

  it("never shares a config whose fields differ, even under the same name", () => {
    const factored = factorTemplates([
      exported("1", [record("GeoIP", 1, 1), record("Filter", 2, 2, { enabled: false })]),
      exported("2", [record("GeoIP", 1, 1), record("Filter", 2, 2, { enabled: true })]),
      exported("3", [record("GeoIP", 1, 1), record("Filter", 2, 2, { description: "Drops tests" })]),
    ]);
    expect(factored.templates).toEqual([
      {
        name: "shared-1",
        families: [{ family: PC, configs: [{ name: "GeoIP", plugin: 1, enabled: true, ...NULLS }] }],
      },
    ]);
    expect(factored.projects.map((project) => project.families[0]?.configs)).toEqual([
      [{ name: "Filter", plugin: 2, enabled: false, ...NULLS }],
      [{ name: "Filter", plugin: 2, enabled: true, ...NULLS }],
      [{ name: "Filter", plugin: 2, enabled: true, description: "Drops tests", match_action: null }],
    ]);
  });

  it("a config all but one project have becomes a template of its own, in server order", () => {
    const results = ["1", "2", "3", "4"].map((project) =>
      exported(project, [
        record("GeoIP", 1, 1),
        ...(project === "3" ? [] : [record("Taxonomy", 3, 2)]),
        record("Filter", 2, project === "3" ? 2 : 3),
      ]),
    );
    const factored = factorTemplates(results);
    expect(
      factored.templates.map((template) => template.families[0]?.configs.map((config) => config.name)),
    ).toEqual([["GeoIP"], ["Taxonomy", "Filter"]]);
    expect(factored.projects.map((project) => project.use)).toEqual([
      ["shared-1", "shared-2"],
      ["shared-1", "shared-2"],
      ["shared-1"],
      ["shared-1", "shared-2"],
    ]);
    // Positions are the server's orders: nothing needs `order:`.
    expect(expansionOf(factored, "1", PC)).toEqual([
      ["GeoIP", null],
      ["Taxonomy", null],
      ["Filter", null],
    ]);
    expect(expansionOf(factored, "3", PC)).toEqual([
      ["GeoIP", null],
      ["Filter", null],
    ]);
  });

  it("the same configs in another order: shares what sits at the same order, and writes every order", () => {
    const factored = factorTemplates([
      exported("1", [record("A", 1, 1), record("B", 2, 2), record("C", 3, 3)]),
      exported("2", [record("B", 2, 1), record("A", 1, 2), record("C", 3, 3)]),
      exported("3", [record("D", 4, 1)]),
    ]);
    expect(factored.templates).toHaveLength(1);
    expect(expansionOf(factored, "1", PC)).toEqual([
      ["C", 3],
      ["A", 1],
      ["B", 2],
    ]);
    expect(expansionOf(factored, "2", PC)).toEqual([
      ["C", 3],
      ["B", 1],
      ["A", 2],
    ]);
    // Project 3 shares nothing with them: its list stays positional.
    expect(expansionOf(factored, "3", PC)).toEqual([["D", null]]);
  });

  it("writes orders through every project that shares a template with one that needs them", () => {
    // Project 1's own config sits at order 5, so its expansion needs orders; project 2 alone would
    // be positional, but it uses the same template, whose configs now carry `order:` (no mix).
    const factored = factorTemplates([
      exported("1", [record("A", 1, 1), record("B", 2, 2), record("Own", 9, 5)]),
      exported("2", [record("A", 1, 1), record("B", 2, 2)]),
      exported("3", [record("Z", 1, 1)]),
    ]);
    expect(expansionOf(factored, "1", PC)).toEqual([
      ["A", 1],
      ["B", 2],
      ["Own", 5],
    ]);
    expect(expansionOf(factored, "2", PC)).toEqual([
      ["A", 1],
      ["B", 2],
    ]);
    expect(expansionOf(factored, "3", PC)).toEqual([["Z", null]]);
  });

  it("server orders with gaps and ties are written as they are", () => {
    const factored = factorTemplates([
      exported("1", [record("A", 1, 5), record("B", 2, 5), record("C", 3, 9)]),
      exported("2", [record("A", 1, 5), record("B", 2, 5), record("C", 3, 9)]),
    ]);
    expect(expansionOf(factored, "2", PC)).toEqual([
      ["A", 5],
      ["B", 5],
      ["C", 9],
    ]);
  });

  it("never puts a config pinned by id into a template", () => {
    const factored = factorTemplates(
      ["1", "2"].map((project) => exported(project, [record("GeoIP", 1, 1), record(null, 8, 2)])),
    );
    expect(factored.templates[0]?.families[0]?.configs.map((config) => config.name)).toEqual(["GeoIP"]);
    for (const project of factored.projects) {
      expect(project.families[0]?.configs).toEqual([expect.objectContaining({ id: expect.any(Number) })]);
    }
  });

  it("keeps both families, each in its own block of the shared template", () => {
    const factored = factorTemplates(
      ["1", "2"].map((project) =>
        exported(project, [record("GeoIP", 1, 1)], [record("Notification Bar", 40, 1)]),
      ),
    );
    expect(factored.templates).toEqual([
      {
        name: "shared-1",
        families: [
          { family: PC, configs: [{ name: "GeoIP", plugin: 1, enabled: true, ...NULLS }] },
          { family: FE, configs: [{ name: "Notification Bar", plugin: 40, enabled: true, ...NULLS }] },
        ],
      },
    ]);
  });

  it("is deterministic: the order projects are given in changes neither templates nor their names", () => {
    const results = [
      exported("1", [record("A", 1, 1), record("B", 2, 2)]),
      exported("2", [record("A", 1, 1), record("B", 2, 2), record("C", 3, 3)]),
      exported("3", [record("A", 1, 1), record("C", 3, 2)]),
      exported("4", [record("B", 2, 1), record("C", 3, 2)]),
    ];
    const forward = factorTemplates(results);
    const backward = factorTemplates([...results].reverse());
    expect(backward.templates).toEqual(forward.templates);
    expect([...backward.projects].reverse()).toEqual(forward.projects);
  });

  it("0 projects: nothing; 1 project: written out, no template", () => {
    expect(factorTemplates([])).toEqual({ templates: [], projects: [] });
    const single = exported("7", [record("A", 1, 1)]);
    expect(factorTemplates([single])).toEqual({
      templates: [],
      projects: [{ project: "7", use: [], families: single.families }],
    });
  });
});

describe("renderTemplatedManifest", () => {
  it("quotes what YAML would misread and escapes ${, in templates and own configs", () => {
    const awkward = ["yes", "1", "#hash", "a: b", "Cost ${MONTH}", "~", "null", "- dash"];
    const shared = awkward.map((name, index) =>
      record(name, index + 1, index + 1, { description: "${X} $${Y}" }),
    );
    const results = ["1", "2"].map((project) =>
      exported(project, [...shared.map((item) => ({ ...item })), record("${own}", Number(project), 99)]),
    );
    const text = renderTemplatedManifest(factorTemplates(results), results);
    const document = parse(text) as {
      templates: Record<string, { plugin_configs: { configs: { name: string; description?: string }[] } }>;
      projects: Record<string, { use: string[]; plugin_configs: { configs: { name: string }[] } }>;
    };
    const readBack = (value: string) => value.replaceAll("$${", () => "${");
    const templated = document.templates["shared-1"]?.plugin_configs.configs ?? [];
    expect(templated.map((config) => readBack(config.name))).toEqual(awkward);
    expect(templated.map((config) => config.description)).toEqual(awkward.map(() => "$${X} $$${Y}"));
    expect(document.projects["2"]?.use).toEqual(["shared-1"]);
    expect(document.projects["2"]?.plugin_configs.configs.map((config) => config.name)).toEqual(["$${own}"]);
    expect(text).toContain("use: [ shared-1 ]");
  });
});

describe("a config pinned by id: in one project, whose fields others share", () => {
  it("stays that project's own; the template the others share carries no id", () => {
    // Two records named "A" in project 1: export pins the lower id and leaves the other alone.
    const results = [
      exported("1", [record("A", 1, 1), record("A", 1, 1)]),
      exported("2", [record("A", 1, 1)]),
      exported("3", [record("A", 1, 1)]),
    ];
    const factored = factorTemplates(results);
    expect(factored.templates).toHaveLength(1);
    expect(factored.templates[0]?.families[0]?.configs).toEqual([
      expect.not.objectContaining({ id: expect.anything() }),
    ]);
    const own = factored.projects.find((project) => project.project === "1");
    expect(own?.use).toEqual([]);
    expect(own?.families[0]?.configs).toEqual([
      expect.objectContaining({ name: "A", id: expect.any(Number) }),
    ]);
  });
});
