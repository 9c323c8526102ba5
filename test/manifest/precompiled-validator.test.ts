// The build's precompiled manifest validator (manifest-validator.generated.js) must answer exactly
// as ajv compiling the schema at run time: the same verdict and the same error objects, from
// which schema-checks.ts builds every message the tests of this folder check from source.

import { fileURLToPath, pathToFileURL } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { createManifestAjv } from "../../src/manifest/manifest-ajv.js";
import { allowedKeysAt, loadManifestSchema } from "../../src/manifest/plain-manifest.js";
import { fc } from "../support/fast-check.js";

const GENERATED = fileURLToPath(
  new URL("../../dist/src/manifest/manifest-validator.generated.js", import.meta.url),
);
const precompiled = ((await import(pathToFileURL(GENERATED).href)) as { validate: ValidateFunction })
  .validate;
const compiled = createManifestAjv(Ajv, addFormats.default).compile(loadManifestSchema());

function answers(validate: ValidateFunction, value: unknown) {
  const valid = validate(value);
  return { valid, errors: validate.errors ?? null };
}

const config = { name: "GeoIP", plugin: 1 };

// One case per keyword the schema uses, and the values that sit on their edges.
const cases: [string, unknown][] = [
  [
    "a valid manifest",
    {
      version: 1,
      server: { base_url: "https://app.example.com" },
      projects: { "1": { plugin_configs: { configs: [config] } } },
    },
  ],
  [
    "unknown keys everywhere",
    {
      version: 1,
      extra: 1,
      server: { url: "x" },
      projects: { "1": { plugin_configs: { configs: [{ ...config, colour: "red" }] }, apps: {} } },
    },
  ],
  ["missing keys", { projects: { "1": { plugin_configs: { configs: [{}] } } } }],
  [
    "wrong types",
    {
      version: "1",
      projects: {
        "1": { plugin_configs: { configs: [{ name: 3, plugin: "1", enabled: "yes", order: 1.5 }] } },
      },
    },
  ],
  ["wrong version and a null family", { version: 2, projects: { "1": { plugin_configs: null } } }],
  [
    "bounds",
    {
      version: 1,
      projects: { "1": { plugin_configs: { configs: [{ ...config, id: 0, plugin: -1, order: -3 }] } } },
    },
  ],
  [
    "lengths counted in code points",
    {
      version: 1,
      projects: {
        "1": {
          plugin_configs: {
            configs: [
              { ...config, name: "😀".repeat(400) },
              { ...config, name: "😀".repeat(401) },
              { ...config, name: "" },
            ],
          },
        },
      },
    },
  ],
  [
    "a control character in a name",
    { version: 1, projects: { "1": { plugin_configs: { configs: [{ ...config, name: "a\u0007b" }] } } } },
  ],
  ["base URLs: no scheme, not a URI, ftp", { version: 1, server: { base_url: "app.example.com" } }],
  ["base URL that is not a URI", { version: 1, server: { base_url: "https://exa mple.com/%%" } }],
  ["project keys that are not ids", { version: 1, projects: { abc: {}, "@current": {}, "${ID}": {} } }],
  ["not a mapping at all", ["version", 1]],
];

describe("the precompiled manifest validator", () => {
  it.each(cases)("answers %s exactly as the run-time compiler", (_name, value) => {
    expect(answers(precompiled, value)).toEqual(answers(compiled, value));
  });

  it("answers any manifest-shaped value exactly as the run-time compiler", () => {
    // Every key the schema allows in a config, and one it does not.
    const key = fc.constantFrom(...allowedKeysAt(["projects", "1", "plugin_configs", "configs", 0]), "nmae");
    const configs = fc.array(fc.dictionary(key, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 5 }), {
      maxLength: 3,
    });
    const family = fc.record({ configs, prune: fc.jsonValue({ maxDepth: 0 }) }, { requiredKeys: [] });
    const families = fc.dictionary(
      fc.constantFrom("plugin_configs", "pipeline_frontend_apps_configs", "apps"),
      family,
      {
        maxKeys: 2,
      },
    );
    const manifest = fc.record(
      {
        version: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 0 })),
        server: fc.oneof(
          fc.record({ base_url: fc.oneof(fc.webUrl(), fc.string()) }),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        projects: fc.dictionary(fc.oneof(fc.constantFrom("1", "@current"), fc.string()), families, {
          maxKeys: 2,
        }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(manifest, (value) => {
        expect(answers(precompiled, value)).toEqual(answers(compiled, value));
      }),
      { numRuns: 100 },
    );
  });
});
