// Where variables come from: `--var NAME=VALUE` arguments and `--var-file` YAML files, whose
// errors carry file:line:col and never show a value (a var file may hold secrets).

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatDiagnostic, loadManifests } from "../../src/manifest/index.js";
import { parseVarFile, parseVariableAssignment } from "../../src/manifest/variables.js";

const SECRET = "s3cr3t-value-never-printed";

describe("--var NAME=VALUE", () => {
  it.each([
    ["A=1", { name: "A", value: "1" }],
    ["_x9=", { name: "_x9", value: "" }],
    ["URL=https://h/?a=b=c", { name: "URL", value: "https://h/?a=b=c" }],
  ])("parses %s", (argument, expected) => {
    expect(parseVariableAssignment(argument)).toEqual(expected);
  });

  it.each([SECRET, `9X=${SECRET}`, `A-B=${SECRET}`, `=${SECRET}`, `${SECRET}==`])(
    "refuses %s without quoting it",
    (argument) => {
      const parsed = parseVariableAssignment(argument);
      expect(parsed).toHaveProperty("problem");
      expect(JSON.stringify(parsed)).not.toContain("s3cr3t");
    },
  );
});

describe("var files", () => {
  function parse(text: string) {
    const result = parseVarFile({ file: "vars.yaml", text });
    return {
      values: Object.fromEntries(result.entries.map(([name, variable]) => [name, variable.value])),
      errors: result.errors.map(formatDiagnostic),
      warnings: result.warnings.map(formatDiagnostic),
    };
  }

  it("reads quoted values as YAML does and unquoted ones exactly as written", () => {
    const result = parse(
      [
        "# comment",
        'QUOTED: "a: b # c"',
        "PLAIN: hello world  # trailing comment",
        "INT: 12",
        "DECIMAL: 1.50",
        "HEX: 0x1F",
        "BOOL: true",
        "NULL_WORD: null",
        "TILDE: ~",
        "EMPTY:",
        "BLOCK: |",
        "  two",
        "  lines",
        "ALIASED: &a shared",
        "ALIAS: *a",
      ].join("\n"),
    );
    expect(result.errors).toEqual([]);
    expect(result.values).toEqual({
      QUOTED: "a: b # c",
      PLAIN: "hello world",
      INT: "12",
      DECIMAL: "1.50",
      HEX: "0x1F",
      BOOL: "true",
      NULL_WORD: "null",
      TILDE: "~",
      EMPTY: "",
      BLOCK: "two\nlines\n",
      ALIASED: "shared",
      ALIAS: "shared",
    });
  });

  it("accepts an empty file and a JSON object", () => {
    expect(parse("# nothing yet\n")).toEqual({ values: {}, errors: [], warnings: [] });
    expect(parse('{"A": "1", "B": 2}').values).toEqual({ A: "1", B: "2" });
  });

  it.each([
    [
      "a list at the top",
      `- ${SECRET}\n`,
      ["vars.yaml:1:1: a var file is a YAML mapping of `NAME: value` lines, such as `PLUGIN_ID: 12`"],
    ],
    [
      "a bad name",
      `1ST: ${SECRET}\n`,
      ['vars.yaml:1:1: "1ST" is not a variable name; use letters, digits and _, not starting with a digit'],
    ],
    [
      "a list value",
      `OK: 1\nLIST: [${SECRET}]\n`,
      ["vars.yaml:2:7: LIST must have a single value (text, a number, true or false), not a list or mapping"],
    ],
    [
      "a duplicate name",
      `A: ${SECRET}\nA: other\n`,
      ['vars.yaml:2:1: duplicate key "A" (first at line 1, column 1); remove one of them'],
    ],
    [
      "a syntax error on a secret's line",
      `A: 1\nB: "${SECRET}\nC: 3\n`,
      [/^vars\.yaml:\d+:\d+: not valid YAML here; a var file is a YAML mapping of `NAME: value` lines/],
    ],
    ["an unclosed flow mapping", `{A: ${SECRET}\n`, [/^vars\.yaml:\d+:\d+: not valid YAML here/]],
  ])("refuses %s at its position, never printing a value", (_, text, expected) => {
    const result = parse(text);
    expect(result.errors).toHaveLength(expected.length);
    expected.forEach((line, index) => {
      if (typeof line === "string") expect(result.errors[index]).toBe(line);
      else expect(result.errors[index]).toMatch(line);
    });
    expect(JSON.stringify(result.errors)).not.toContain("s3cr3t");
  });

  it("warns about a tag without quoting it", () => {
    const result = parse(`A: !${SECRET} value\n`);
    expect(result.values).toEqual({ A: "value" });
    expect(result.warnings).toEqual([
      "vars.yaml:1:4: warning: a tag here is ignored and the value read as text; remove the tag",
    ]);
  });
});

describe("loading with var files", () => {
  let directory: string;
  const manifest =
    'version: 1\nprojects:\n  "${PROJECT}":\n    plugin_configs:\n      configs:\n        - name: "${NAME}"\n          plugin: ${PLUGIN}\n';

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "pcsync-vars-"));
    await writeFile(join(directory, "pcsync.yaml"), manifest);
    await writeFile(join(directory, "base.yaml"), "PROJECT: 1\nNAME: base\nPLUGIN: 3\n");
    await writeFile(join(directory, "prod.yaml"), "NAME: prod\n");
    await writeFile(join(directory, "broken.yaml"), `PLUGIN: [${SECRET}]\n`);
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it("merges the files in order under --var, and types what lands in the manifest", async () => {
    const result = await loadManifests([], {
      env: { PCSYNC_VAR_PLUGIN: "9", PCSYNC_VAR_NAME: "env" },
      cwd: directory,
      varFiles: ["base.yaml", "prod.yaml"],
      assignments: [{ name: "PROJECT", value: "42" }],
    });
    expect(result.errors.map(formatDiagnostic)).toEqual([]);
    const family = result.value?.families[0];
    expect(family?.project).toBe("42");
    expect(family?.configs[0]?.fields).toMatchObject({ name: "prod", plugin: 3 });
  });

  it("reports a missing var file, a directory and a bad value first, then what they left unset", async () => {
    const result = await loadManifests([], {
      env: {},
      cwd: directory,
      varFiles: ["missing.yaml", ".", "broken.yaml"],
    });
    expect(result.value).toBeUndefined();
    const printed = result.errors.map(formatDiagnostic);
    expect(printed.slice(0, 3)).toEqual([
      "missing.yaml: no such file; check the path given to --var-file",
      ".: is a directory; --var-file takes a YAML file of `NAME: value` lines",
      "broken.yaml:1:9: PLUGIN must have a single value (text, a number, true or false), not a list or mapping",
    ]);
    expect(printed.slice(3)).toEqual([
      expect.stringMatching(/^pcsync\.yaml:3:4: variable PROJECT is not set; set PCSYNC_VAR_PROJECT/),
      expect.stringMatching(/^pcsync\.yaml:6:18: variable NAME is not set/),
      expect.stringMatching(/^pcsync\.yaml:7:19: variable PLUGIN is not set/),
    ]);
    expect(printed.join("\n")).not.toContain("s3cr3t");
  });

  it("stops reading an endless device at the size limit", async () => {
    const result = await loadManifests([], { env: {}, cwd: directory, varFiles: ["/dev/zero"] });
    expect(result.errors.map(formatDiagnostic)[0]).toBe(
      "/dev/zero: file is over the 1 MiB limit for a var file; a var file holds `NAME: value` lines: keep large data out of it",
    );
  });

  it("redacts the API key from any message, also one quoting a manifest key", async () => {
    const key = "phx_redaction_test_key_0123";
    await writeFile(join(directory, "keyed.yaml"), `version: 1\n${key}: 1\n${key}: 2\n`);
    const result = await loadManifests(["keyed.yaml"], { env: { PCSYNC_API_KEY: key }, cwd: directory });
    const printed = result.errors.map(formatDiagnostic);
    expect(printed.length).toBeGreaterThan(0);
    expect(printed.join("\n")).not.toContain(key);
    expect(printed).toContain(
      "keyed.yaml:2:1: this key contains the API key; the API key is never interpolated into a manifest (plans, pull-request comments and logs would show it). Remove it, and replace the key: it is in this file",
    );
  });
});
