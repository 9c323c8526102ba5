// The one reader of JSON files pcsync reads back: bounded, parsed, validated, and a problem in
// words with the JSON path of the first schema error.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parseJson, readBoundedText, validateJson } from "../../src/files/read-json-file.js";
import { openWorkspace } from "../support/workspace.js";

const validate = new Ajv({ allErrors: true }).compile<{ items: number[] }>({
  type: "object",
  required: ["items"],
  properties: { items: { type: "array", items: { type: "integer" } } },
});

/** A JSON text parsed, then validated, as the readers of plans and journals do. */
function parseJsonDocument(text: string) {
  const parsed = parseJson(text);
  return parsed.problem === undefined ? validateJson(parsed.value, validate, "the file") : parsed;
}

describe("reading an untrusted JSON file", () => {
  it("stops at the byte limit, and says a missing file is missing", async ({ onTestFinished }) => {
    const { directory } = await openWorkspace(onTestFinished);
    await writeFile(join(directory, "big.json"), "x".repeat(2000));
    expect(await readBoundedText("big.json", directory, 1000)).toEqual({
      problem: { kind: "too_large", maxBytes: 1000 },
    });
    expect(await readBoundedText("none.json", directory, 1000)).toEqual({ problem: { kind: "missing" } });
    expect(await readBoundedText("big.json", directory, 4000)).toEqual({ value: "x".repeat(2000) });
  });

  it("returns the value, or the first problem at its path", () => {
    expect(parseJsonDocument('{"items":[1,2]}')).toEqual({ value: { items: [1, 2] } });
    expect(parseJsonDocument('{"items":[1,"2"]}').problem).toEqual({
      kind: "schema",
      message: "items[1] must be integer",
      path: "items[1]",
    });
    expect(parseJsonDocument("{}").problem?.message).toBe('the file lacks the required property "items"');
    expect(parseJsonDocument("{").problem?.kind).toBe("not_json");
  });
});
