// Templates and project sets: what each project ends up with, where every config traces back to,
// and every mistake refused at its file:line:col (plus the project it arose for).

import { describe, expect, it } from "vitest";
import {
  type DesiredFamily,
  formatDiagnostic,
  type LoadResult,
  loadManifestSources,
  resolveProjectSets,
  variablesFromEnvironment,
} from "../../src/manifest/index.js";
import { manifest } from "../support/manifest-text.js";

const BASELINE = [
  "templates:",
  "  baseline:",
  "    plugin_configs:",
  "      configs:",
  "        - name: GeoIP", // 5
  "          plugin: 1",
  "          enabled: true",
  "        - name: Property Filter", // 8
  "          plugin: 2",
  "    pipeline_frontend_apps_configs:",
  "      configs:",
  "        - name: Notification Bar", // 12
  "          plugin: 40",
  "  analytics:",
  "    plugin_configs:",
  "      prune: true",
  "      configs:",
  "        - name: Taxonomy Standardizer", // 18
  "          plugin: 3",
];

/** A manifest of the BASELINE templates (lines 2-20) and then `lines`, from line 21 on. */
function withBaseline(...lines: string[]): string {
  return manifest("version: 1", ...BASELINE, ...lines);
}

function load(text: string, env: Record<string, string> = {}, other?: string): LoadResult {
  const sources = [{ file: "fleet.yaml", text }];
  if (other !== undefined) sources.push({ file: "other.yaml", text: other });
  return loadManifestSources(sources, variablesFromEnvironment(env));
}

function errorsOf(text: string, env: Record<string, string> = {}): string[] {
  return load(text, env).errors.map(formatDiagnostic);
}

/** `project/family: name#order@line(via line)`, one string per family. */
function summary(families: readonly DesiredFamily[] | undefined): string[] {
  return (families ?? []).map(
    (family) =>
      `${family.project}/${family.family}${family.prune ? " prune" : ""}: ${family.configs
        .map(
          (config) =>
            `${config.fields.name}#${config.fields.order}@${config.source.line}${config.appliedAt ? `<${config.appliedAt.line}` : ""}`,
        )
        .join(", ")}`,
  );
}

describe("expansion", () => {
  it("applies sets' templates first, then the project's, overrides, omits and own configs", () => {
    const result = load(
      withBaseline(
        "project_sets:",
        "  - name: web", // 21
        '    projects: ["1", "2"]',
        "    use: [baseline]", // 23
        "projects:",
        '  "1":',
        "    use: [analytics]", // 26
        "    plugin_configs:",
        "      prune: false",
        "      overrides:",
        "        Property Filter:",
        "          description: Drops internal properties", // 31
        "      omit: [GeoIP]",
        "      configs:",
        "        - name: Extra", // 34
        "          plugin: 9",
        '  "4":',
        "    use: [analytics]", // 37
      ),
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(summary(result.value?.families)).toEqual([
      "1/plugin_configs: Property Filter#1@9<24, Taxonomy Standardizer#2@19<27, Extra#3@35",
      "1/pipeline_frontend_apps_configs: Notification Bar#1@13<24",
      "2/plugin_configs: GeoIP#1@6<24, Property Filter#2@9<24",
      "2/pipeline_frontend_apps_configs: Notification Bar#1@13<24",
      "4/plugin_configs prune: Taxonomy Standardizer#1@19<38",
    ]);
    const filter = result.value?.families[0]?.configs[0];
    expect(filter?.fields.description).toBe("Drops internal properties");
    expect(filter?.fieldSources.description?.line).toBe(32);
    // The template itself is untouched: project 2's Property Filter has no description.
    expect(result.value?.families[2]?.configs[1]?.fields.description).toBeUndefined();
    expect(result.value?.unresolved).toBeUndefined();
  });

  it("uses templates defined in another file of the manifest", () => {
    const result = load(
      manifest("version: 1", "projects:", '  "7":', "    use: [analytics]"),
      {},
      withBaseline(),
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const [family] = result.value?.families ?? [];
    expect(family?.configs[0]?.source).toEqual({ file: "other.yaml", line: 19, col: 11 });
    expect(family?.configs[0]?.appliedAt).toEqual({ file: "fleet.yaml", line: 4, col: 11 });
  });

  it("takes explicit orders when every config has one, overrides included", () => {
    const result = load(
      manifest(
        "version: 1",
        "templates:",
        "  ordered:",
        "    plugin_configs:",
        "      configs:",
        "        - { name: A, plugin: 1, order: 10 }",
        "        - { name: B, plugin: 2, order: 20 }",
        "projects:",
        '  "1":',
        "    use: [ordered]",
        "    plugin_configs:",
        "      overrides:",
        "        A: { order: 30 }",
        "      configs:",
        "        - { name: C, plugin: 3, order: 5 }",
      ),
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(summary(result.value?.families)).toEqual(["1/plugin_configs: A#30@6<10, B#20@7<10, C#5@15"]);
    expect(result.value?.families[0]?.explicitOrder).toBe(true);
  });

  it("reads ${VAR} in templates and in set project ids", () => {
    const result = load(
      manifest(
        "version: 1",
        "templates:",
        "  t:",
        "    plugin_configs:",
        "      configs:",
        "        - name: X",
        "          plugin: ${PLUGIN}",
        "          enabled: ${ON}",
        "project_sets:",
        '  - projects: ["${WEB}", 3]',
        "    use: [t]",
      ),
      { PCSYNC_VAR_PLUGIN: "7", PCSYNC_VAR_ON: "true", PCSYNC_VAR_WEB: "12" },
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(result.value?.families.map((family) => family.project)).toEqual(["3", "12"]);
    expect(result.value?.families[0]?.configs[0]?.fields).toEqual({
      name: "X",
      plugin: 7,
      enabled: true,
      order: 1,
    });
  });

  it("an empty template changes nothing, with a warning", () => {
    const result = load(
      manifest("version: 1", "templates:", "  empty: {}", "projects:", '  "1":', "    use: [empty]"),
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings.map(formatDiagnostic)).toEqual([
      'fleet.yaml:3:3: warning: template "empty" provides no family; using it changes nothing',
    ]);
    expect(result.value?.families).toEqual([]);
  });

  it("warns once per place of an order shared across a template and other blocks, naming the projects", () => {
    const result = load(
      manifest(
        "version: 1",
        "templates:",
        "  base:",
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1, order: 1 }", // 6
        "        - { name: Filter, plugin: 2, order: 2 }", // 7
        "project_sets:",
        '  - projects: ["1", "2"]',
        "    use: [base]",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: Mine, plugin: 3, order: 2 }", // 15
        '  "3":',
        "    use: [base]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { order: 2 }", // 20
        '  "4":',
        "    use: [base]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { order: 3 }",
      ),
    );
    expect(result.errors).toEqual([]);
    const tie = (names: string) =>
      `; the service breaks the tie by plugin id, give distinct orders (in the template or with overrides) (for project ${names})`;
    expect(result.warnings.map(formatDiagnostic)).toEqual([
      `fleet.yaml:7:45: warning: order 2 of "Filter" is also the order of "GeoIP" (fleet.yaml:20) in plugin_configs${tie("3")}`,
      `fleet.yaml:15:43: warning: order 2 of "Mine" is also the order of "Filter" (fleet.yaml:7) in plugin_configs${tie("1")}`,
    ]);
  });

  it("a project's prune wins over a set's, which wins over the templates'", () => {
    const result = load(
      withBaseline(
        "project_sets:",
        '  - projects: ["1", "2", "3"]',
        "    use: [analytics]",
        "    plugin_configs:",
        "      prune: false",
        '  - projects: ["3"]',
        "    use: [baseline]",
        "projects:",
        '  "2":',
        "    plugin_configs:",
        "      prune: true",
        '  "5":',
        "    use: [analytics]",
      ),
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const prunes = result.value?.families
      .filter((family) => family.family === "plugin_configs")
      .map((family) => `${family.project}:${family.prune}`);
    expect(prunes).toEqual(["1:false", "2:true", "3:false", "5:true"]);
  });

  it("expands a template used by 200 projects once per project, sharing nothing mutable", () => {
    const ids = Array.from({ length: 200 }, (_, index) => `"${index + 1}"`);
    const result = load(
      withBaseline(
        "project_sets:",
        `  - projects: [${ids.join(", ")}]`,
        "    use: [baseline, analytics]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { enabled: false }",
        "projects:",
        '  "7":',
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { description: Seven }",
      ),
    );
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const families = result.value?.families ?? [];
    expect(families).toHaveLength(400);
    const geoip = (project: string) =>
      families.find((family) => family.project === project && family.family === "plugin_configs")?.configs[0]
        ?.fields;
    expect(geoip("7")).toEqual({ name: "GeoIP", plugin: 1, enabled: false, description: "Seven", order: 1 });
    expect(geoip("8")).toEqual({ name: "GeoIP", plugin: 1, enabled: false, order: 1 });
  });
});

describe("projects: all", () => {
  const text = withBaseline(
    "project_sets:",
    "  - name: everyone", // 21
    "    projects: all",
    '    except: ["3"]',
    "    use: [baseline]",
    "projects:",
    '  "2":',
    "    use: [analytics]",
  );

  it("stays unresolved offline: the families are those of the named projects", () => {
    const result = load(text);
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    expect(result.value?.unresolved?.sets.map((set) => set.projects)).toEqual(["all"]);
    expect(result.value?.families.map((family) => family.project)).toEqual(["2", "2"]);
  });

  it("resolves against the listing, minus except, merging the named projects", () => {
    const loaded = load(text).value;
    if (loaded === undefined) throw new Error("not loaded");
    const resolved = resolveProjectSets(loaded, ["1", "2", "3", "10"]);
    expect(resolved.errors).toEqual([]);
    expect(resolved.value !== undefined && "unresolved" in resolved.value).toBe(false);
    expect(summary(resolved.value?.families)).toEqual([
      "1/plugin_configs: GeoIP#1@6<25, Property Filter#2@9<25",
      "1/pipeline_frontend_apps_configs: Notification Bar#1@13<25",
      "2/plugin_configs prune: GeoIP#1@6<25, Property Filter#2@9<25, Taxonomy Standardizer#3@19<28",
      "2/pipeline_frontend_apps_configs: Notification Bar#1@13<25",
      "10/plugin_configs: GeoIP#1@6<25, Property Filter#2@9<25",
      "10/pipeline_frontend_apps_configs: Notification Bar#1@13<25",
    ]);
  });

  it("makes @current the first listed project, merged like a named one; naming it twice is refused", () => {
    const withCurrent = withBaseline(
      "project_sets:",
      "  - projects: all", // 22
      "    use: [baseline]",
      "projects:",
      '  "@current":', // 25
      "    use: [analytics]",
    );
    const loaded = load(withCurrent).value;
    if (loaded === undefined) throw new Error("not loaded");
    const resolved = resolveProjectSets(loaded, ["5", "6"]);
    expect(resolved.errors).toEqual([]);
    expect(summary(resolved.value?.families)).toEqual([
      "5/plugin_configs prune: GeoIP#1@6<23, Property Filter#2@9<23, Taxonomy Standardizer#3@19<26",
      "5/pipeline_frontend_apps_configs: Notification Bar#1@13<23",
      "6/plugin_configs: GeoIP#1@6<23, Property Filter#2@9<23",
      "6/pipeline_frontend_apps_configs: Notification Bar#1@13<23",
    ]);
    const twice = load(`${withCurrent}  "5":\n    use: [analytics]\n`).value;
    if (twice === undefined) throw new Error("not loaded");
    expect(resolveProjectSets(twice, ["5", "6"]).errors.map(formatDiagnostic)).toEqual([
      'fleet.yaml:25:3: project "@current" is project 5 for this API key, which the manifest also defines at fleet.yaml:27; keep one of the two',
    ]);
  });

  it("warns about an except the listing does not have", () => {
    const loaded = load(text).value;
    if (loaded === undefined) throw new Error("not loaded");
    const resolved = resolveProjectSets(loaded, ["1", "2"]);
    expect(resolved.warnings.map(formatDiagnostic)).toEqual([
      'fleet.yaml:24:14: warning: except: project 3 is not in project set "everyone" (not listed for this API key); it excludes nothing',
    ]);
  });
});

describe("refused", () => {
  const cases: { name: string; lines: string[]; env?: Record<string, string>; errors: string[] }[] = [
    {
      name: "an unknown template, with a suggestion",
      lines: ["projects:", '  "1":', "    use: [baselin]"],
      errors: ['fleet.yaml:23:11: unknown template "baselin" in project "1"; did you mean "baseline"?'],
    },
    {
      name: "an unknown template without a close match lists the templates",
      lines: ["project_sets:", '  - projects: ["1"]', "    use: [zzz]"],
      errors: [
        'fleet.yaml:23:11: unknown template "zzz" in project set "project_sets[0]"; the templates are: "baseline", "analytics"',
      ],
    },
    {
      name: "an override of a config no used template provides",
      lines: [
        "projects:",
        '  "1":',
        "    use: [baseline]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIp: { enabled: false }",
      ],
      errors: [
        'fleet.yaml:26:9: overrides: "GeoIp" is not a config of the templates used here; did you mean "GeoIP"?',
      ],
    },
    {
      name: "an omit of an own config",
      lines: [
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      omit: [Mine]",
        "      configs:",
        "        - { name: Mine, plugin: 1 }",
      ],
      errors: [
        'fleet.yaml:24:14: omit: "Mine" names no templated config: no template used here provides plugin_configs',
      ],
    },
    {
      name: "omit and override of the same config",
      lines: [
        "projects:",
        '  "1":',
        "    use: [baseline]",
        "    plugin_configs:",
        "      omit: [GeoIP]",
        "      overrides:",
        "        GeoIP: { enabled: false }",
      ],
      errors: [
        'fleet.yaml:27:9: overrides "GeoIP", which omit leaves out at fleet.yaml:25; remove one of the two',
      ],
    },
    {
      name: "an own config with a templated name",
      lines: [
        "projects:",
        '  "1":',
        "    use: [baseline]",
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
      ],
      errors: [
        'fleet.yaml:26:11: config "GeoIP" is also provided at fleet.yaml:6 via fleet.yaml:23; a name identifies one config of a project + family: rename one, or omit the templated one',
      ],
    },
    {
      name: "a set and a project both adding the same own config",
      lines: [
        "project_sets:",
        '  - projects: ["1"]',
        "    plugin_configs:",
        "      configs:",
        "        - { name: Extra, plugin: 9 }",
        "projects:",
        '  "1":',
        "    plugin_configs:",
        "      configs:",
        "        - { name: Extra, plugin: 9 }",
      ],
      errors: [
        'fleet.yaml:30:11: config "Extra" is also provided at fleet.yaml:25 via fleet.yaml:22; a name identifies one config of a project + family: rename one, or omit the templated one',
      ],
    },
    {
      name: "the same config name from two templates, for each project that uses both",
      lines: [
        "  more:",
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 1 }",
        "project_sets:",
        '  - projects: ["1", "2"]',
        "    use: [baseline, more]",
      ],
      errors: [
        'fleet.yaml:24:11: config "GeoIP" is also provided at fleet.yaml:6 via fleet.yaml:27; a name identifies one config of a project + family: rename one, or omit the templated one (for projects 1, 2)',
      ],
    },
    {
      name: "a template used twice by one project (set and project)",
      lines: [
        "project_sets:",
        '  - projects: ["1"]',
        "    use: [baseline]",
        "projects:",
        '  "1":',
        "    use: [baseline]",
      ],
      errors: [
        'fleet.yaml:26:11: template "baseline" is already applied at fleet.yaml:23; use a template once per project (for project 1)',
      ],
    },
    {
      name: "a template used twice in one list",
      lines: ["projects:", '  "1":', "    use: [baseline, baseline]"],
      errors: [
        'fleet.yaml:23:21: template "baseline" is already used by project "1" at fleet.yaml:23; use a template once',
      ],
    },
    {
      name: "a mix of ordered and unordered configs after expansion",
      lines: [
        "projects:",
        '  "1":',
        "    use: [baseline]",
        "    plugin_configs:",
        "      configs:",
        "        - { name: Extra, plugin: 9, order: 3 }",
      ],
      errors: [
        'fleet.yaml:6:11: "GeoIP" has no order, but "Extra" has one (fleet.yaml:26); in plugin_configs give every config of the project an order (in the template or with overrides), or none (for project 1)',
      ],
    },
    {
      name: "two sets giving one field different values",
      lines: [
        "project_sets:",
        '  - projects: ["1", "2"]',
        "    use: [baseline]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { enabled: false }",
        '  - projects: ["2"]',
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { enabled: true }",
      ],
      errors: [
        'fleet.yaml:30:27: enabled: true for "GeoIP" differs from false at fleet.yaml:26 of another set with the same project; set it in the project\'s own overrides (for project 2)',
      ],
    },
    {
      name: "two sets disagreeing on prune",
      lines: [
        "project_sets:",
        '  - projects: ["1"]',
        "    use: [baseline]",
        "    plugin_configs: { prune: true }",
        '  - projects: ["1"]',
        "    plugin_configs: { prune: false }",
      ],
      errors: [
        "fleet.yaml:26:30: prune: false differs from prune: true at fleet.yaml:24 of another set with the same project; set prune in the project's plugin_configs block (for project 1)",
      ],
    },
    {
      name: "templates disagreeing on prune",
      lines: [
        "  pruned:",
        "    plugin_configs:",
        "      prune: false",
        "      configs: []",
        "projects:",
        '  "1":',
        "    use: [analytics, pruned]",
      ],
      errors: [
        "fleet.yaml:23:14: prune: false differs from prune: true at fleet.yaml:17, both templates used for plugin_configs; set prune in the project's plugin_configs block (for project 1)",
      ],
    },
    {
      name: "id: in a template",
      lines: [
        "  pinned:",
        "    plugin_configs:",
        "      configs:",
        "        - { name: P, plugin: 1, id: 5 }",
      ],
      errors: [
        "fleet.yaml:24:33: id: is refused in a template: a record id belongs to one project; pin it in that project's `overrides: {NAME: {id: ...}}`",
      ],
    },
    {
      name: "id: in a set's override",
      lines: [
        "project_sets:",
        '  - projects: ["1"]',
        "    use: [baseline]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIP: { id: 5 }",
      ],
      errors: [
        "fleet.yaml:26:22: id: in project_sets[0] would pin record 5 in every project of the set; pin it in one project's own block",
      ],
    },
    {
      name: "a template with an unknown family",
      lines: ["  typo:", "    plugin_config:", "      configs: []"],
      errors: ['fleet.yaml:22:5: unknown family "plugin_config"; did you mean "plugin_configs"?'],
    },
    {
      name: "projects: with neither a list nor all",
      lines: ["project_sets:", "  - projects: every", "    use: [baseline]"],
      errors: [
        'fleet.yaml:22:15: projects of project_sets[0] must be a list of project ids (["1", "4"]) or `all`, got "every"',
      ],
    },
    {
      name: "a bad project id in a set",
      lines: ["project_sets:", '  - projects: ["01", "x"]', "    use: [baseline]"],
      errors: [
        'fleet.yaml:22:16: project id "01" has leading zeros; write "1"',
        'fleet.yaml:22:22: project id "x" must be a decimal project id (such as "1") or "@current"',
      ],
    },
  ];

  for (const { name, lines, env, errors } of cases) {
    it(name, () => {
      // BASELINE ends inside `templates:`, so lines that start with "  " add templates.
      expect(errorsOf(withBaseline(...lines), env)).toEqual(errors);
    });
  }

  it("a template defined in two files names both", () => {
    const result = load(withBaseline(), {}, manifest("version: 1", ...BASELINE.slice(0, 13)));
    expect(result.errors.map(formatDiagnostic)).toEqual([
      'other.yaml:3:3: template "baseline" is also defined at fleet.yaml:3; define each template once (rename one of them)',
    ]);
  });

  it("an except naming a project not in the set is a warning", () => {
    const result = load(
      withBaseline("project_sets:", '  - projects: ["1"]', '    except: ["9"]', "    use: [baseline]"),
    );
    expect(result.errors).toEqual([]);
    expect(result.warnings.map(formatDiagnostic)).toEqual([
      'fleet.yaml:23:14: warning: except: project 9 is not in project set "project_sets[0]"; it excludes nothing',
    ]);
  });

  it("one mistake in a template used by 200 projects is one error naming a few of them", () => {
    const ids = Array.from({ length: 200 }, (_, index) => `"${index + 1}"`);
    const errors = errorsOf(
      withBaseline(
        "  clash:",
        "    plugin_configs:",
        "      configs:",
        "        - { name: GeoIP, plugin: 5 }",
        "project_sets:",
        `  - projects: [${ids.join(", ")}]`,
        "    use: [baseline, clash]",
      ),
    );
    expect(errors).toEqual([
      'fleet.yaml:24:11: config "GeoIP" is also provided at fleet.yaml:6 via fleet.yaml:27; a name identifies one config of a project + family: rename one, or omit the templated one (for projects 1, 2, 3, 4, 5 and 195 more)',
    ]);
  });

  it("a conflict between two `all` sets shows offline, for any of their projects", () => {
    const loaded = load(
      withBaseline(
        "project_sets:",
        "  - projects: all",
        "    use: [baseline]",
        "    plugin_configs: { prune: true }",
        "  - projects: all",
        "    plugin_configs: { prune: false }",
      ),
    );
    expect(loaded.errors.map(formatDiagnostic)).toEqual([
      "fleet.yaml:26:30: prune: false differs from prune: true at fleet.yaml:24 of another set with the same project; set prune in the project's plugin_configs block (for project any of `projects: all`)",
    ]);
  });
});

describe("projects: all, offline", () => {
  it("a mistake in an `all` set shows in validate though the manifest names none of its projects", () => {
    const errors = errorsOf(
      withBaseline(
        "project_sets:",
        "  - projects: all",
        "    use: [baseline]",
        "    plugin_configs:",
        "      overrides:",
        "        GeoIp: { enabled: false }",
      ),
    );
    expect(errors).toEqual([
      'fleet.yaml:26:9: overrides: "GeoIp" is not a config of the templates used here; did you mean "GeoIP"? (for project any of `projects: all`)',
    ]);
  });
});
