// No user input reaches an internal error: every flag of every command (read from the program
// itself, so a new flag is fuzzed without touching this file) and every key of a manifest, given
// hostile values, ends the built CLI with exit 0-4 and a message, never a stack trace. A few runs
// per command here; PCSYNC_FUZZ_RUNS=200 (or more) for a longer hunt.

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Option } from "commander";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { SecretRegistry } from "../../src/redact.js";
import { stringify } from "../../src/vendor/yaml.js";
import { runBuiltCli } from "../support/cli.js";
import { startServer, type TestServer } from "../support/test-server.js";
import { temporaryDirectory, type WorkDir } from "../support/work-dir.js";

const RUNS = Number(process.env.PCSYNC_FUZZ_RUNS ?? 1);
/** Each spawn may wait for a loaded machine: the time allowed grows with the runs asked for. */
const TIMEOUT = 60_000 + RUNS * 30_000;

const MANIFEST = {
  version: 1,
  templates: {
    base: {
      plugin_configs: {
        protect: ["cfg-00*"],
        configs: [{ name: "cfg-001", plugin: 1, enabled: true, protect: true, order: 1 }],
      },
    },
  },
  project_sets: [{ name: "staging", projects: ["3"], use: ["base"] }],
  projects: {
    "3": {
      plugin_configs: {
        prune: true,
        fields: "all",
        drift: "heal",
        configs: [
          {
            name: "billing-eu",
            plugin: 2,
            enabled: true,
            order: 2,
            description: "EU billing",
            ignore_fields: ["description"],
          },
          { name: "old", plugin: 3, order: 3, deleted: true },
        ],
      },
      pipeline_frontend_apps_configs: { configs: [{ name: "Pineapple Mode", plugin: 41, enabled: true }] },
    },
  },
};

/** Values that break parsers: numbers at their edges, durations, globs, paths, URLs, encodings. */
const HOSTILE = [
  "",
  " ",
  "-",
  "--",
  "-1",
  "0",
  "1",
  "1.5",
  "1e400",
  // Finite, but past what a timer holds once in milliseconds; and below a millisecond.
  "1e308",
  "3000000",
  "0.0001",
  "-0",
  "NaN",
  "Infinity",
  "0x1f",
  "99999999999999999999999",
  "10%",
  "5m",
  "1h30m",
  "-5s",
  "0s",
  "1.5.5",
  "*",
  "**",
  "a-*",
  "cfg-00*",
  "bot-filter",
  "[",
  "(",
  "\\",
  "$(x)",
  "${X}",
  "NAME=VALUE",
  "=",
  "A=",
  "=B",
  "1/0",
  "0/1",
  "2/1",
  "1/2",
  "a/b",
  "127.0.0.1:0",
  ":0",
  "localhost:99999",
  "[::1]:0",
  "http://",
  "http://127.0.0.1:1",
  "ftp://x",
  "file:///etc/passwd",
  "/",
  ".",
  "..",
  "/dev/null",
  "pcsync.yaml",
  "plan.json",
  "journal.jsonl",
  "missing.yaml",
  "dir",
  "caf\u00e9",
  "cafe\u0301",
  "Billing ",
  "\n",
  "null",
  "true",
  "{}",
  "[]",
  '{"a":1}',
  "2026-01-01",
  "2026-13-45T99:99",
  "yesterday",
  "-1d",
  "5 minutes",
  "\ud835\udfd8",
  "\u0661\u0662",
  "a".repeat(5000),
];

/** Any text a shell could pass (no NUL: a process argument cannot hold one). */
const anyText = fc.string({ unit: "binary", maxLength: 12 }).map((text) => text.replaceAll("\0", ""));
const value = (choices: readonly string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE) },
    {
      weight: choices.length > 0 ? 2 : 0,
      arbitrary: fc.constantFrom(...(choices.length > 0 ? choices : [""])),
    },
    { weight: 1, arbitrary: fc.integer().map(String) },
    { weight: 1, arbitrary: fc.double().map(String) },
    { weight: 2, arbitrary: anyText },
  );

interface CommandShape {
  name: string;
  positional: number;
  options: Option[];
}

/** What a command needs so that a run ends by itself, before the fuzzed flags (which may override it). */
const BOUNDED: Record<string, string[]> = {
  watch: ["--once", "--listen", "127.0.0.1:0"],
  serve: ["--port", "0", "--quiet"],
};
/** Commands that run until stopped when their flags are valid: stopped after a while, and that is fine. */
const RUNS_UNTIL_STOPPED = new Set(["serve", "logs", "watch", "demo"]);
/** A stack frame: what a user must never see. */
const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

let server: TestServer;
let work: WorkDir;
let commands: CommandShape[];

beforeAll(async () => {
  server = await startServer("seed");
  work = await temporaryDirectory();
  await writeFile(join(work.path, "pcsync.yaml"), stringify(MANIFEST));
  await mkdir(join(work.path, "dir"));
  const run = (...args: string[]) => server.run(args, { cwd: work.path });
  expect((await run("validate")).code).toBe(0);
  expect([0, 2]).toContain((await run("plan", "-o", "plan.json")).code);
  expect((await run("apply", "--auto-approve", "--journal", "journal.jsonl", "--project", "3")).code).toBe(0);
  const io = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: {},
    cwd: work.path,
    secrets: new SecretRegistry(),
  };
  const program = await buildProgram(io, () => undefined);
  commands = program.commands.map((command) => ({
    name: command.name(),
    positional: command.registeredArguments.length,
    options: command.options.filter((option) => option.long !== "--help"),
  }));
});
afterAll(async () => {
  await server.close();
  await work.remove();
});

function argumentsOf(shape: CommandShape): fc.Arbitrary<string[]> {
  if (shape.options.length === 0) {
    return fc.array(value([]), { maxLength: shape.positional + 1 }).map((args) => [shape.name, ...args]);
  }
  const flag = fc
    .constantFrom(...shape.options)
    .chain((option) =>
      option.required || option.optional
        ? value(option.argChoices ?? []).map((given): string[] => [option.long ?? option.short ?? "", given])
        : fc.constant<string[]>([option.long ?? option.short ?? ""]),
    );
  const positional = fc.array(fc.oneof(fc.constantFrom("plan.json", "bash", "zsh", "fish"), value([])), {
    minLength: 0,
    maxLength: shape.positional + 1,
  });
  return fc
    .tuple(positional, fc.array(flag, { minLength: 1, maxLength: 4 }))
    .map(([args, flags]) => [shape.name, ...(BOUNDED[shape.name] ?? []), ...args, ...flags.flat()]);
}

async function expectCleanEnd(argv: string[]): Promise<void> {
  const stopsItself = !RUNS_UNTIL_STOPPED.has(argv[0] ?? "");
  const result = await runBuiltCli(argv, {
    cwd: work.path,
    env: { ...server.env, HOME: work.path },
    // Generous: on a loaded machine a run that refuses its flags at once can still take seconds.
    timeoutMs: stopsItself ? 60_000 : 3_000,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  const shown = `pcsync ${JSON.stringify(argv).slice(0, 400)} -> ${result.code ?? result.signal}\n${output.slice(0, 2000)}`;
  expect(output, shown).not.toContain("internal error");
  expect(output, shown).not.toMatch(STACK_FRAME);
  if (result.signal !== null) {
    expect(stopsItself, `${shown}\ndid not end within 60 s`).toBe(false);
    return;
  }
  expect(result.code, shown).toBeGreaterThanOrEqual(0);
  expect(result.code, shown).toBeLessThanOrEqual(4);
  // A failure says why: on stderr, or in the JSON asked for on stdout.
  if (result.code !== 0 && result.code !== 2) expect(output.trim(), shown).not.toBe("");
}

describe("fuzzed flags of every command", () => {
  it("reads every command from the program", () => {
    expect(commands.map((command) => command.name)).toEqual(
      expect.arrayContaining([
        "validate",
        "plan",
        "apply",
        "watch",
        "rollback",
        "export",
        "show",
        "logs",
        "serve",
      ]),
    );
  });

  // Three lanes run at once; each run picks a command of its lane, so that every command is
  // reached in every run of the suite and the file stays short.
  const lanes = [
    ["validate", "plan", "apply", "watch"],
    ["rollback", "export", "show", "demo"],
    ["serve", "logs", "job", "frontend", "completion"],
  ];
  for (const lane of lanes) {
    it.concurrent(
      `${lane.join(", ")}: any flag values end with exit 0-4 and a message`,
      async () => {
        const shapes = lane.map((name) => {
          const shape = commands.find((command) => command.name === name);
          if (shape === undefined) throw new Error(`no command ${name}`);
          return shape;
        });
        const argv = fc.constantFrom(...shapes).chain(argumentsOf);
        await fc.assert(fc.asyncProperty(argv, expectCleanEnd), { numRuns: RUNS * 2, endOnFailure: true });
      },
      TIMEOUT,
    );
  }
});

describe("inputs that once reached an internal error", () => {
  it.concurrent.each([
    [["serve", "--host", "nosuch.invalid", "--port", "0"], "cannot listen on nosuch.invalid:0: no such host"],
    [["serve", "--data", "dir", "--port", "0"], "as the data file: it is a directory"],
    [["plan", "--target", "billing-*", "--exclude", "a-(b"], ""],
    [["apply", "--dry-run", "--allow-destroy", "bot-filter"], ""],
  ])("pcsync %j", async (argv, message) => {
    const result = await runBuiltCli(argv, { cwd: work.path, env: { ...server.env, HOME: work.path } });
    expect(result.stderr).not.toContain("internal error");
    expect(result.stderr).toContain(message);
    expect([0, 1, 2]).toContain(result.code);
  });
});

/** Every place in the manifest a user could write something else. */
function placesOf(node: unknown, path: (string | number)[] = []): (string | number)[][] {
  const places = [path];
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) places.push(...placesOf(item, [...path, index]));
  } else if (node !== null && typeof node === "object") {
    for (const [key, item] of Object.entries(node)) places.push(...placesOf(item, [...path, key]));
  }
  return places;
}

const MANIFEST_KEYS = [
  "version",
  "owner",
  "variables",
  "templates",
  "project_sets",
  "projects",
  "rollout",
  "plugin_configs",
  "pipeline_frontend_apps_configs",
  "configs",
  "overrides",
  "omit",
  "prune",
  "protect",
  "fields",
  "drift",
  "use",
  "name",
  "plugin",
  "enabled",
  "order",
  "description",
  "ignore_fields",
  "deleted",
  "id",
  "match_action",
  "waves",
  "percent",
];

const manifestValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, 2 ** 53, -(2 ** 31)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...HOSTILE), { maxLength: 3 }) },
  { weight: 1, arbitrary: anyText },
);

/** The manifest with one place replaced, or one key added (a known one, with any value). */
const mutatedManifest = fc
  .tuple(
    fc.constantFrom(...placesOf(MANIFEST)),
    fc.option(fc.constantFrom(...MANIFEST_KEYS), { freq: 2 }),
    manifestValue,
    fc.boolean(),
  )
  .map(([path, addedKey, given, asJson]) => {
    const copy: unknown = structuredClone(MANIFEST);
    const parentPath = addedKey === null ? path.slice(0, -1) : path;
    const key = addedKey ?? path.at(-1);
    let parent: unknown = copy;
    for (const step of parentPath) parent = (parent as Record<string | number, unknown>)[step];
    let text: string;
    if (key === undefined || parent === null || typeof parent !== "object") text = stringify(given);
    else {
      (parent as Record<string | number, unknown>)[key] = given;
      text = asJson ? JSON.stringify(copy, null, 1) : stringify(copy);
    }
    return text;
  });

describe("fuzzed manifests", () => {
  const commandsReadingManifests = [["validate"], ["plan"], ["apply", "--auto-approve"], ["export", "-o"]];
  it(
    "any manifest key's value ends validate, plan, apply and export -o with exit 0-4 and a message",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...commandsReadingManifests),
          mutatedManifest,
          async (command, text) => {
            const file = await work.write("fuzzed.yaml", text);
            const argv =
              command[0] === "export" ? ["export", "--project", "3", "-o", file] : [...command, "-f", file];
            await expectCleanEnd(argv);
          },
        ),
        { numRuns: RUNS * 3, endOnFailure: true },
      );
    },
    TIMEOUT,
  );
});
