// `export -o` updates only a pcsync manifest (any other YAML is refused, whatever it holds), and an
// export takes the `owner:` of the mark its records share; mixed marks are a warning naming them.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildManifest, type ExportResult, exportOwner } from "../../src/export/build-manifest.js";
import { renderNewManifest, updateManifestText } from "../../src/export/update-manifest.js";
import { writeMark } from "../../src/owner-mark.js";
import { remoteRecord } from "../support/builders.js";
import { fc } from "../support/fast-check.js";

const SCHEMA = JSON.parse(
  readFileSync(new URL("../../schemas/manifest.schema.json", import.meta.url), "utf8"),
) as { properties: Record<string, unknown> };

const result = buildManifest({
  project: "1",
  families: [
    { family: "plugin_configs", records: [remoteRecord({ id: 4, name: "GeoIP", plugin: 1, order: 1 })] },
  ],
});

const COMPOSE = `version: "3.8"
services:
  web:
    image: nginx
`;

describe("export -o on a file that is not a pcsync manifest", () => {
  const refusals: [string, string, RegExp][] = [
    ["a compose file (its version is text)", COMPOSE, /top-level key "services", which a manifest does not/],
    ["an empty file", "", /holds no YAML data/],
    ["white space and comments only", "\n  \n# nothing here yet\n", /holds no YAML data/],
    ["a YAML list", "- a\n- b\n", /top level is a list/],
    ["a scalar", "hello\n", /top level is not a mapping/],
    ["a mapping with unrelated keys", "name: app\nreplicas: 3\n", /keys "name", "replicas"/],
    ["manifest keys beside others", "version: 1\nprojects: {}\nkind: ConfigMap\n", /key "kind"/],
    ["projects without version", 'projects:\n  "1": {}\n', /no `version: 1`/],
    ["another version", "version: 2\nprojects: {}\n", /version is 2, not 1/],
    ["version as text", 'version: "1"\nprojects: {}\n', /version is "1", not 1/],
  ];
  it.each(refusals)("refuses %s, saying why and what to do", (_, text, why) => {
    let message = "";
    try {
      updateManifestText(text, result, "target.yaml");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^target\.yaml is not a pcsync manifest \(/);
    expect(message).toMatch(why);
    expect(message).toContain("it was left as it is");
    expect(message).toContain("choose a new file, or remove target.yaml first");
  });

  it("refuses any mapping with a key a manifest does not have", () => {
    const manifestKeys = Object.keys(SCHEMA.properties);
    const foreign = fc.string({ minLength: 1 }).filter((key) => !manifestKeys.includes(key));
    fc.assert(
      fc.property(foreign, fc.boolean(), (key, withVersion) => {
        const text = `${withVersion ? "version: 1\n" : ""}${JSON.stringify(key)}: x\n`;
        expect(() => updateManifestText(text, result, "f.yaml")).toThrow(/is not a pcsync manifest/);
      }),
    );
  });

  // (templates and project_sets are refused by a rule of their own: export does not update a fleet.)
  it("updates a manifest that has every other top-level key the schema has, rollout: too, keeping them", () => {
    expect(Object.keys(SCHEMA.properties)).toContain("rollout");
    const blocks: Record<string, string> = {
      version: "version: 1",
      server: "server:\n  base_url: https://app.example.com",
      owner: "owner: team-a",
      rollout: "rollout:\n  waves:\n    - name: all\n      percent: 100\n  bake: 5m",
      projects: "projects: {}",
    };
    const text = `${Object.keys(SCHEMA.properties)
      .filter((key) => key !== "templates" && key !== "project_sets")
      .map((key) => blocks[key] ?? `${key}: a block this test has no example of`)
      .join("\n")}\n`;
    const updated = updateManifestText(text, result, "pcsync.yaml");
    for (const block of Object.values(blocks).slice(0, -1)) expect(updated).toContain(block);
    expect(updated).toContain("name: GeoIP");
  });

  it("updates a manifest with a comment header, keeping it", () => {
    const text = `# Owned by the data team.\n# Reviewed weekly.\nversion: 1\nprojects: {}\n`;
    const updated = updateManifestText(text, result, "pcsync.yaml");
    expect(updated.startsWith("# Owned by the data team.\n# Reviewed weekly.\nversion: 1\n")).toBe(true);
    expect(updated).toContain("name: GeoIP");
  });
});

function exported(records: { id: number; name: string; description: string | null }[]): ExportResult {
  return buildManifest({
    project: "1",
    families: [
      {
        family: "plugin_configs",
        records: records.map((record, index) =>
          remoteRecord({ ...record, plugin: index + 1, order: index + 1 }),
        ),
      },
    ],
  });
}

describe("the owner of an export", () => {
  it("is the owner whose mark every record carries; the text is exported without the mark", () => {
    const results = [
      exported([
        { id: 1, name: "A", description: writeMark("Adds country", "web") },
        { id: 2, name: "B", description: writeMark(null, "web") },
      ]),
    ];
    expect(exportOwner(results)).toEqual({ owner: "web" });
    const text = renderNewManifest(results);
    expect(text).toMatch(/^version: 1\nowner: web\nprojects:/m);
    expect(text).toContain("description: Adds country");
    expect(text).not.toContain("[pcsync owner=");
  });

  it("is none, without a word, when no record carries a mark", () => {
    const results = [exported([{ id: 1, name: "A", description: "plain" }])];
    expect(exportOwner(results)).toEqual({});
    expect(renderNewManifest(results)).not.toContain("owner:");
  });

  it("is none, with a warning naming each owner and its records, when the marks differ", () => {
    const results = [
      exported([
        { id: 1, name: "A", description: writeMark("x", "web") },
        { id: 2, name: "B", description: writeMark("y", "data-platform") },
        { id: 3, name: "C", description: null },
      ]),
    ];
    const { owner, warning } = exportOwner(results);
    expect(owner).toBeUndefined();
    expect(warning).toContain(
      'owner "data-platform": "B" (id 2) in project 1 plugin_configs; owner "web": "A" (id 1) in project 1 plugin_configs; no owner mark: "C" (id 3) in project 1 plugin_configs',
    );
    expect(renderNewManifest(results)).not.toContain("owner:");
  });

  it("is none when one owner's records sit beside unmarked ones (the export would adopt them)", () => {
    const results = [
      exported([
        { id: 1, name: "A", description: writeMark("x", "web") },
        { id: 2, name: "B", description: "y" },
      ]),
    ];
    expect(exportOwner(results).warning).toMatch(/owner "web": "A" \(id 1\).*no owner mark: "B" \(id 2\)/);
  });

  it("names at most ten records per owner", () => {
    const many = Array.from({ length: 13 }, (_, index) => ({
      id: index + 1,
      name: `R${index + 1}`,
      description: writeMark(null, "web"),
    }));
    const { warning } = exportOwner([exported([...many, { id: 99, name: "Z", description: null }])]);
    expect(warning).toContain('"R10" (id 10) in project 1 plugin_configs and 3 more');
    expect(warning).not.toContain('"R11"');
  });

  it("is added after version: to an existing manifest that has none; another owner there stays", () => {
    const results = [exported([{ id: 1, name: "A", description: writeMark(null, "web") }])];
    const [first] = results;
    if (first === undefined) throw new Error("no result");
    const added = updateManifestText("# Web team.\nversion: 1\nprojects: {}\n", first, "m.yaml", {
      owner: "web",
    });
    expect(added).toMatch(/^# Web team\.\nversion: 1\nowner: web\nprojects:/);
    const warnings: string[] = [];
    const kept = updateManifestText("version: 1\nowner: data\nprojects: {}\n", first, "m.yaml", {
      owner: "web",
      warn: (message) => warnings.push(message),
    });
    expect(kept).toContain("owner: data\n");
    expect(warnings).toEqual([
      expect.stringMatching(
        /^m\.yaml: says owner: "data", but the exported records carry the mark of owner "web"/,
      ),
    ]);
  });
});
