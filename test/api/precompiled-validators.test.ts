// The build ships precompiled response validators (scripts/build-validators.mjs); they must judge
// every response exactly as the validators compiled from schemas/api at run time do.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import { describe, expect, it } from "vitest";
import { AJV_OPTIONS, SCHEMA_FILES, SHARED_SCHEMA_FILES } from "../../src/api/response-schemas.js";
import { fc } from "../support/fast-check.js";

const GENERATED = new URL("../../dist/src/api/validators.generated.js", import.meta.url);

function runtimeValidators(): Record<string, ValidateFunction> {
  const ajv = new Ajv(AJV_OPTIONS);
  const directory = new URL("../../schemas/api/", import.meta.url);
  for (const file of [...SHARED_SCHEMA_FILES, ...Object.values(SCHEMA_FILES)]) {
    ajv.addSchema(JSON.parse(readFileSync(new URL(file, directory), "utf8")) as object);
  }
  return Object.fromEntries(
    Object.entries(SCHEMA_FILES).map(([shape, file]) => [shape, ajv.getSchema(file) as ValidateFunction]),
  );
}

// Integers at and around the bounds the schemas put on ids (1 to 2^53 - 1) and orders.
const integerArb = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(
    0,
    -1,
    1,
    1.5,
    Number.MAX_SAFE_INTEGER,
    2 ** 53,
    2 ** 53 + 2,
    -Number.MAX_SAFE_INTEGER,
    -(2 ** 53),
    1e300,
  ),
);
const idArb = fc.oneof(integerArb, fc.string(), fc.constant(null));

const recordArb = fc.record(
  {
    id: idArb,
    plugin: fc.oneof(integerArb, fc.boolean()),
    enabled: fc.oneof(fc.boolean(), fc.constant("yes")),
    order: integerArb,
    name: fc.oneof(fc.string(), fc.constant(null), fc.integer()),
    description: fc.option(fc.string(), { nil: null }),
    deleted: fc.boolean(),
    match_action: fc.option(integerArb, { nil: null }),
    team_id: idArb,
    config: fc.anything(),
  },
  { requiredKeys: ["id", "plugin", "enabled", "order", "deleted"] },
);

const logEntryArb = fc.record(
  {
    id: fc.oneof(fc.string(), fc.constantFrom("", " "), integerArb),
    team_id: idArb,
    plugin_id: idArb,
    plugin_config_id: idArb,
    timestamp: fc.constant("2024-06-01T00:00:00Z"),
    source: fc.constant("PLUGIN"),
    type: fc.constant("INFO"),
    message: fc.string(),
    instance_id: fc.option(fc.string(), { nil: null }),
  },
  { requiredKeys: ["id", "timestamp", "source", "type", "message"] },
);

const projectArb = fc.record(
  { id: fc.oneof(idArb, fc.constantFrom("", " ", "7")), name: fc.option(fc.string(), { nil: null }) },
  { requiredKeys: ["id"] },
);

const pageOf = (items: fc.Arbitrary<unknown>) =>
  fc.record({
    count: fc.oneof(fc.nat(), fc.string()),
    next: fc.option(fc.webUrl(), { nil: null }),
    previous: fc.option(fc.webUrl(), { nil: null }),
    results: fc.array(items, { maxLength: 3 }),
  });

const responseArb = fc.oneof(
  recordArb,
  fc.array(recordArb, { maxLength: 3 }),
  pageOf(recordArb),
  pageOf(logEntryArb),
  pageOf(projectArb),
  fc.record({ type: fc.string(), code: fc.string(), detail: fc.anything(), attr: fc.option(fc.string()) }),
  fc.anything(),
);

// Without a build there is nothing to compare: skipped on a developer's machine, a failure in CI
// (where a run that checks nothing must not pass).
const skipWithoutBuild = !existsSync(fileURLToPath(GENERATED)) && !process.env.CI;

describe.skipIf(skipWithoutBuild)("precompiled response validators", () => {
  it("exist for every response shape and agree with the schemas compiled at run time", async () => {
    const generated = (await import(GENERATED.href)) as Record<string, ValidateFunction>;
    const runtime = runtimeValidators();
    for (const shape of Object.keys(SCHEMA_FILES)) expect(typeof generated[shape]).toBe("function");
    fc.assert(
      fc.property(responseArb, (value) => {
        for (const shape of Object.keys(SCHEMA_FILES)) {
          const built = generated[shape] as ValidateFunction;
          const compiled = runtime[shape] as ValidateFunction;
          expect(built(value)).toBe(compiled(value));
          expect(built.errors ?? null).toEqual(compiled.errors ?? null);
        }
      }),
      { numRuns: 300 },
    );
  });
});
