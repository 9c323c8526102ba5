// Property tests: whatever the text (random YAML, random mutations of a valid manifest, random
// data), the loader returns diagnostics and never throws; merging does not depend on file order.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type LoadResult, loadManifestSources, variablesFromEnvironment } from "../../src/manifest/index.js";
import { fc } from "../support/fast-check.js";

const validManifest = readFileSync(new URL("../../examples/pcsync.yaml", import.meta.url), "utf8");
const variables = variablesFromEnvironment({ PCSYNC_VAR_PROJECT_ID: "4", PCSYNC_VAR_PLUGIN_ID: "9" });

function loadSafely(text: string): LoadResult {
  const result = loadManifestSources([{ file: "m.yaml", text }], variables);
  const lineCount = text.split(/\r\n|\r|\n/).length;
  for (const diagnostic of [...result.errors, ...result.warnings]) {
    expect(diagnostic.file).toBe("m.yaml");
    expect(diagnostic.message.length).toBeGreaterThan(0);
    expect(diagnostic.line).toBeGreaterThanOrEqual(1);
    expect(diagnostic.line).toBeLessThanOrEqual(lineCount + 1);
    expect(diagnostic.col).toBeGreaterThanOrEqual(1);
  }
  // Exactly one of: a desired state, or errors saying why not.
  expect(result.value === undefined).toBe(result.errors.length > 0);
  return result;
}

const yamlToken = fc.constantFrom(
  "version: 1",
  "projects:",
  '"1":',
  "plugin_configs:",
  "pipeline_frontend_apps_configs:",
  "configs:",
  "prune: true",
  "- name: A",
  "plugin: 1",
  "order: 2",
  "id: 3",
  "enabled: yes",
  "description: null",
  "&a",
  "*a",
  "<<:",
  "${PLUGIN_ID}",
  "${X:-1}",
  "$${",
  "[",
  "]",
  "{",
  "}",
  ",",
  ":",
  "- ",
  "? ",
  "!tag",
  "!!str",
  '"',
  "'",
  "#",
  "|",
  ">",
  "---",
  "...",
  "%YAML 1.2",
  "\t",
  "\n",
  "\n  ",
  "\n    ",
  " ",
  "\u0000",
  "\uFEFF",
);

describe("the loader never crashes", () => {
  it("on random YAML-ish token soup", () => {
    fc.assert(
      fc.property(fc.array(yamlToken, { maxLength: 60 }), (tokens) => {
        loadSafely(tokens.join(""));
      }),
      { numRuns: 400 },
    );
  });

  it("on random text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => {
        loadSafely(text);
      }),
      { numRuns: 300 },
    );
  });

  it("on random mutations of a valid manifest", () => {
    const mutation = fc.oneof(
      fc.record({
        kind: fc.constant("delete" as const),
        at: fc.nat(),
        length: fc.integer({ min: 1, max: 20 }),
      }),
      fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), token: yamlToken }),
      fc.record({ kind: fc.constant("duplicate-line" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("swap-lines" as const), at: fc.nat(), other: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 5 }), (mutations) => {
        let text = validManifest;
        for (const change of mutations) {
          const at = change.at % (text.length + 1);
          if (change.kind === "delete") text = text.slice(0, at) + text.slice(at + change.length);
          else if (change.kind === "insert") text = text.slice(0, at) + change.token + text.slice(at);
          else {
            const lines = text.split("\n");
            const index = change.at % lines.length;
            if (change.kind === "duplicate-line") lines.splice(index, 0, lines[index] ?? "");
            else {
              const other = change.other % lines.length;
              [lines[index], lines[other]] = [lines[other] ?? "", lines[index] ?? ""];
            }
            text = lines.join("\n");
          }
        }
        loadSafely(text);
      }),
      { numRuns: 400 },
    );
  });

  it("on random data shaped like a manifest", () => {
    const scalar = fc.oneof(
      fc.integer({ min: -5, max: 50 }),
      fc.boolean(),
      fc.constant(null),
      fc.string({ maxLength: 8 }),
      fc.constantFrom("${PLUGIN_ID}", "${NOPE}", "@current", "1", ""),
    );
    const config = fc.dictionary(
      fc.constantFrom(
        "name",
        "plugin",
        "enabled",
        "description",
        "match_action",
        "order",
        "id",
        "deleted",
        "nme",
      ),
      scalar,
      { maxKeys: 6 },
    );
    const family = fc.record(
      {
        prune: fc.oneof(fc.boolean(), scalar),
        configs: fc.oneof(fc.array(config, { maxLength: 4 }), scalar),
      },
      { requiredKeys: [] },
    );
    const project = fc.dictionary(
      fc.constantFrom("plugin_configs", "pipeline_frontend_apps_configs", "plugin_config"),
      fc.oneof(family, scalar),
      { maxKeys: 2 },
    );
    const manifest = fc.record(
      {
        version: fc.oneof(fc.constant(1), scalar),
        server: fc.oneof(fc.record({ base_url: fc.oneof(fc.webUrl(), scalar) }), scalar),
        projects: fc.oneof(
          fc.dictionary(
            fc.oneof(fc.constantFrom("1", "2", "${PROJECT_ID}", "@current", "x", ""), fc.string()),
            project,
            {
              maxKeys: 3,
            },
          ),
          scalar,
        ),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(manifest, (value) => {
        loadSafely(stringify(value));
      }),
      { numRuns: 300 },
    );
  });
});

describe("merging", () => {
  it("gives the same result in any file order", () => {
    const file = fc.record({
      project: fc.constantFrom("1", "2", "10", "@current"),
      family: fc.constantFrom("plugin_configs", "pipeline_frontend_apps_configs"),
      names: fc.uniqueArray(fc.constantFrom("A", "B", "C", "D"), { maxLength: 3 }),
      id: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(file, { minLength: 1, maxLength: 5 }), fc.nat(), (files, seed) => {
        const sources = files.map((spec, index) => ({
          file: `f${index}.yaml`,
          text: stringify({
            version: 1,
            projects: {
              [spec.project]: {
                [spec.family]: {
                  configs: spec.names.map((name, position) =>
                    position === 0 && spec.id !== undefined
                      ? { name, plugin: 1, id: spec.id }
                      : { name, plugin: 1 },
                  ),
                },
              },
            },
          }),
        }));
        const shuffled = [...sources].sort(
          (a, b) => ((a.file.charCodeAt(1) * 31 + seed) % 7) - ((b.file.charCodeAt(1) * 31 + seed) % 7),
        );
        const forward = loadManifestSources(sources);
        const backward = loadManifestSources([...sources].reverse());
        const mixed = loadManifestSources(shuffled);
        for (const other of [backward, mixed]) {
          expect(other.value).toEqual(forward.value);
          expect(new Set(other.errors.map((error) => JSON.stringify(error)))).toEqual(
            new Set(forward.errors.map((error) => JSON.stringify(error))),
          );
        }
      }),
      { numRuns: 200 },
    );
  });
});
