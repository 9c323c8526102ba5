// The fast reader of plain block YAML (parse-block-yaml.ts) against the yaml library's full parse:
// whenever it reads a text, the full parse finds no problem in it, and the plain manifest built
// from either is the same: the same value, the same interpolation problems, every value and key
// found at the same place. Everything after is shared, so the diagnostics are the same too.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  formatDiagnostic,
  loadManifestSources,
  NO_VARIABLES,
  variablesFromEnvironment,
} from "../../src/manifest/index.js";
import { parseYamlInFull } from "../../src/manifest/load-yaml.js";
import { readBlockYaml } from "../../src/manifest/parse-block-yaml.js";
import { PlainBuilder } from "../../src/manifest/plain-manifest.js";
import { resolveVariables } from "../../src/manifest/variables.js";
import { fc } from "../support/fast-check.js";

const MAX_DEPTH = 32;
/** A secret that some generated values hold, and a variable that some of them use. */
const SECRET = "s3cr3t-key-0123456789";
const VARIABLES = resolveVariables({ env: { PCSYNC_VAR_PLUGIN_ID: "12" }, secrets: [SECRET] }).variables;

/** Whether the fast reader reads `text` (rather than leaving it to the full parse). */
function readsFast(text: string): boolean {
  return readBlockYaml(text, MAX_DEPTH, new PlainBuilder(text, NO_VARIABLES)) !== undefined;
}

/** Checks agreement on `text`; says whether the fast reader read it. */
function agree(text: string): boolean {
  const fastBuilder = new PlainBuilder(text, VARIABLES);
  const fastRead = readBlockYaml(text, MAX_DEPTH, fastBuilder);
  if (fastRead === undefined) return false;
  const fullBuilder = new PlainBuilder(text, VARIABLES);
  const full = parseYamlInFull(text, fullBuilder);
  expect({ errors: full.errors, warnings: full.warnings, fatal: full.fatal }).toStrictEqual({
    errors: [],
    warnings: [],
    fatal: false,
  });
  for (const offset of [0, 1, Math.floor(text.length / 2), text.length - 1, text.length, text.length + 5]) {
    expect(fastRead.positionAt(offset)).toStrictEqual(full.positionAt(offset));
  }
  const fast = fastBuilder.finish(fastRead.positionAt);
  const reference = fullBuilder.finish(full.positionAt);
  expect(fast.errors).toStrictEqual(reference.errors);
  // Not toStrictEqual: it compares the `constructor` properties, which a map with such a key has as data.
  expect(fast.plain?.value).toEqual(reference.plain?.value);
  expect(JSON.stringify(fast.plain?.value)).toBe(JSON.stringify(reference.plain?.value));
  for (const path of pathsOf(reference.plain?.value)) {
    const place = reference.plain?.locations.lookup(path);
    expect(place).toBeDefined();
    expect(fast.plain?.locations.lookup(path)).toStrictEqual(place);
  }
  return true;
}

/** The path of every value in a plain value, itself first. */
function pathsOf(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (value === undefined) return [];
  const paths = [path];
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) paths.push(...pathsOf(item, [...path, index]));
  } else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      paths.push(...pathsOf(Object.getOwnPropertyDescriptor(value, key)?.value, [...path, key]));
    }
  }
  return paths;
}

const key = fc.constantFrom(
  "name",
  "plugin",
  "configs",
  '"1"',
  "'x y'",
  "a/b~c",
  "~1~0",
  "__proto__",
  "constructor",
  "<<",
  "1",
  "007",
  "true",
  "~",
  "null",
  "a b",
  "é",
  '"a: b"',
  "'it''s'",
  '"${X}"',
  "-a",
  "a#b",
  "a #b",
  "a ",
  "?",
  '"esc\\"aped"',
);
const scalar = fc.constantFrom(
  "word",
  "two words",
  "1",
  "-1",
  "+1",
  "0",
  "-0",
  "12345678901234567890",
  "0x1F",
  "0o17",
  "1.5",
  "1e3",
  ".inf",
  ".NaN",
  "true",
  "False",
  "TRUE",
  "yes",
  "null",
  "Null",
  "~",
  '""',
  "''",
  '"a # b"',
  "'it''s'",
  '"x\\"y"',
  "[]",
  "{}",
  "[a]",
  "{a: 1}",
  "a # comment",
  "a#b",
  "https://x.y/z#f",
  "a: b",
  "a:",
  "a:b",
  "&anchor v",
  "*anchor",
  "!tag v",
  "!!str 1",
  "|",
  ">",
  "${X}",
  "x-s3cr3t-key-0123456789",
  "x ]",
  "é",
  '"open',
  "'open",
  "v  ",
  '"q" tail',
  "@current",
  "`tick",
  "%pct",
);
const indent = fc.constantFrom("", "", "  ", "  ", "    ", "      ", " ", "   ");
const line = fc.oneof(
  fc.tuple(indent, key, scalar).map(([space, name, value]) => `${space}${name}: ${value}`),
  fc.tuple(indent, key).map(([space, name]) => `${space}${name}:`),
  fc.tuple(indent, key).map(([space, name]) => `${space}${name}: # note`),
  fc.tuple(indent, key).map(([space, name]) => `${space}${name}:   `),
  indent.map((space) => `${space}-   `),
  indent.map((space) => `${space}-  # note`),
  fc.tuple(indent, scalar).map(([space, value]) => `${space}- ${value}`),
  indent.map((space) => `${space}-`),
  fc.tuple(indent, key, scalar).map(([space, name, value]) => `${space}- ${name}: ${value}`),
  fc.tuple(indent, key).map(([space, name]) => `${space}- ${name}:`),
  fc.tuple(indent, scalar).map(([space, value]) => `${space}- - ${value}`),
  indent.map((space) => `${space}# comment`),
  fc.constantFrom("", "---", "...", "%YAML 1.2", "\t- x", "a: b\r", "k:\tv"),
);

describe("the fast reader agrees with the full parse", () => {
  it("on lines of block YAML, well and badly formed", () => {
    let read = 0;
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), fc.boolean(), (lines, newline) => {
        if (agree(lines.join("\n") + (newline ? "\n" : ""))) read += 1;
      }),
      { numRuns: 1500 },
    );
    // The property says nothing if the reader gives up on everything.
    expect(read).toBeGreaterThan(40);
  });

  it("on nested maps and lists written in the styles block YAML allows", () => {
    // A tree rendered with random indentation widths, lists under a key at its indentation or
    // deeper, maps starting on the `- ` line, comments and blank lines in between.
    type Tree = { map: [string, Tree][] } | { seq: Tree[] } | { scalar: string };
    const { tree } = fc.letrec<{ tree: Tree }>((self) => ({
      tree: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        scalar.map((value) => ({ scalar: value })),
        fc.array(fc.tuple(key, self("tree")), { minLength: 1, maxLength: 4 }).map((map) => ({ map })),
        fc.array(self("tree"), { minLength: 1, maxLength: 3 }).map((seq) => ({ seq })),
      ),
    }));
    const style = fc.record({
      width: fc.constantFrom(1, 2, 3, 4),
      sameIndentLists: fc.boolean(),
      comments: fc.boolean(),
    });
    const render = (root: Tree, options: { width: number; sameIndentLists: boolean; comments: boolean }) => {
      const out: string[] = [];
      const pad = (n: number) => " ".repeat(n);
      // `prefix` is what starts the first line (a `- ` or nothing); later lines start at `indent`.
      const write = (node: Tree, indent: number, prefix: string): void => {
        if ("scalar" in node) {
          out.push(`${prefix}${node.scalar}`);
          return;
        }
        let first = prefix;
        const next = () => {
          const head = first;
          first = pad(indent);
          return head;
        };
        if ("seq" in node) {
          for (const item of node.seq) write(item, indent + 2, `${next()}- `);
          return;
        }
        for (const [name, value] of node.map) {
          const head = `${next()}${name}:`;
          if (options.comments) out.push(`${pad(indent)}# about ${name}`);
          if ("scalar" in value) out.push(`${head} ${value.scalar}`);
          else {
            out.push(head);
            const deeper = "seq" in value && options.sameIndentLists ? indent : indent + options.width;
            write(value, deeper, pad(deeper));
          }
          if (options.comments) out.push("");
        }
      };
      write(root, 0, "");
      return `${out.join("\n")}\n`;
    };
    let read = 0;
    fc.assert(
      fc.property(tree, style, (root, options) => {
        if (agree(render(root, options))) read += 1;
      }),
      { numRuns: 800 },
    );
    expect(read).toBeGreaterThan(50);
  });

  it("on manifest-shaped data as yaml writes it", () => {
    const text = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom("${PLUGIN_ID}", "@current", "1", "", "a/b", "~x", "__proto__", " lead", "trail "),
    );
    const value = fc.oneof(fc.integer({ min: -5, max: 50 }), fc.boolean(), fc.constant(null), text);
    const config = fc.dictionary(fc.oneof(fc.constantFrom("name", "plugin", "enabled", "id"), text), value, {
      maxKeys: 5,
    });
    const manifest = fc.record({
      version: value,
      projects: fc.dictionary(
        text,
        fc.dictionary(
          fc.constantFrom("plugin_configs", "pipeline_frontend_apps_configs"),
          fc.record({ prune: value, configs: fc.array(config, { maxLength: 4 }) }),
          { maxKeys: 2 },
        ),
        { maxKeys: 3 },
      ),
    });
    let read = 0;
    fc.assert(
      fc.property(manifest, (data) => {
        if (agree(stringify(data))) read += 1;
      }),
      { numRuns: 400 },
    );
    expect(read).toBeGreaterThan(100);
  });

  it("on the examples, and on lines of them moved about", () => {
    const example = readFileSync(new URL("../../examples/pcsync.yaml", import.meta.url), "utf8");
    expect(agree(example)).toBe(true);
    const lines = example.split("\n");
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }), (swaps) => {
        const moved = [...lines];
        for (const [from, to] of swaps) {
          const a = from % moved.length;
          const b = to % moved.length;
          [moved[a], moved[b]] = [moved[b] ?? "", moved[a] ?? ""];
        }
        agree(moved.join("\n"));
      }),
      { numRuns: 300 },
    );
  });
});

/** A manifest of `configs` configs in project 1's plugin_configs; config i starts on line 6 + 3i. */
function bigManifest(configs: number, last = "          enabled: true"): string {
  const lines = ["version: 1", "projects:", '  "1":', "    plugin_configs:", "      configs:"];
  for (let index = 0; index < configs; index++) {
    lines.push(`        - name: c${index}`, `          plugin: ${1 + (index % 20)}`);
    lines.push(index === configs - 1 ? last : "          enabled: true");
  }
  return `${lines.join("\n")}\n`;
}

function errorsOf(text: string, env: Record<string, string> = {}): string[] {
  const result = loadManifestSources([{ file: "m.yaml", text }], variablesFromEnvironment(env));
  return result.errors.map(formatDiagnostic);
}

describe("positions stay exact on the fast path", () => {
  it("points at an error at the very end of a 20,000-config file", () => {
    const text = bigManifest(20_000, "          enabled: maybe");
    expect(readsFast(text)).toBe(true);
    // Config 20,000 starts on line 6 + 3 * 19,999: `enabled` is its third line.
    expect(errorsOf(text)).toEqual(['m.yaml:60005:20: "enabled" must be true or false, got text "maybe"']);
  });

  it("points at an unknown key with `/` and `~` in it, and at a `__proto__` key", () => {
    const text = bigManifest(3, "          a/b~c: 1\n          __proto__: 2");
    expect(readsFast(text)).toBe(true);
    const errors = errorsOf(text);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^m\.yaml:14:11: unknown key "a\/b~c"/);
    expect(errors[1]).toMatch(/^m\.yaml:15:11: unknown key "__proto__"/);
  });

  it("points inside an interpolated value, and types it by the schema", () => {
    const text = bigManifest(3, "          enabled: ${ON}\n          description: x ${NOPE} y");
    const errors = errorsOf(text, { PCSYNC_VAR_ON: "true" });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^m\.yaml:15:26: variable NOPE is not set/);
  });

  it("leaves duplicate keys, anchors and aliases to the full parse, with the same messages", () => {
    const duplicate = bigManifest(3, "          enabled: true\n          enabled: false");
    expect(readsFast(duplicate)).toBe(false);
    expect(errorsOf(duplicate)).toEqual([
      'm.yaml:15:11: duplicate key "enabled" (first at line 14, column 11); remove one of them',
    ]);
    const aliased = bigManifest(3, "          enabled: &on true\n          description: *on");
    expect(readsFast(aliased)).toBe(false);
    // An alias's value is where the anchor's is, as before.
    expect(errorsOf(aliased)).toEqual([
      'm.yaml:14:24: "description" must be text or null, got true; if it is meant as text, quote it: description: "true"',
    ]);
  });

  it("reads a huge single string once, and points at it", () => {
    const huge = "x".repeat(2_000_000);
    const text = bigManifest(2, `          description: ${huge}`);
    expect(readsFast(text)).toBe(true);
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^m\.yaml:11:24: "description" is 2000000 characters long/);
  });

  it("points at the later of two project keys that became equal when one failed to interpolate", () => {
    const text = 'version: 1\nprojects:\n  ${NOPE}: {}\n  "": {}\n';
    expect(readsFast(text)).toBe(true);
    const errors = errorsOf(text);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^m\.yaml:3:3: variable NOPE is not set/);
    expect(errors[1]).toMatch(/^m\.yaml:4:3: project id is empty/);
  });
});
