// What a run of the built CLI loads: start-up time is mostly loading modules, so this counts the
// modules of `--version`, `validate`, `plan` and `apply --plan` and checks that none loads what it
// does not need (undici for --version or validate, ajv's schema compiler, another command).

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulatorThread } from "./emulator-thread.js";
import type { Row, Scenario, ScenarioResult } from "./harness.js";

// From dist/bench/ once built: the built CLI, the repository's examples and the recorder, which
// stays a source file (`node --import` loads it as it is).
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));
const RECORDER = fileURLToPath(new URL("../../bench/record-imports.mjs", import.meta.url));

const API_KEY = "phx_bench_startup_imports";

/** What a run must not load; each finds the unwanted URLs among those loaded. */
interface Rule {
  label: string;
  find(imported: readonly string[]): string[];
}

interface Command {
  label: string;
  /** The arguments; `planFile` is a file the plan run writes and the apply run reads. */
  args(planFile: string): string[];
  connects: boolean;
  /** The command modules (src/cli/commands/*) it loads, exactly. */
  commands: readonly string[];
  rules: readonly Rule[];
}

/** The npm packages among imported URLs (`ajv` for .../node_modules/ajv/dist/ajv.js), each once. */
function packagesOf(urls: readonly string[]): string[] {
  const names = urls.flatMap((url) => {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    return match?.[1] === undefined ? [] : [match[1]];
  });
  return [...new Set(names)];
}

function commandModules(imported: readonly string[]): string[] {
  return imported.flatMap((url) => /\/dist\/src\/cli\/commands\/([^/]+)\.js$/.exec(url)?.[1] ?? []);
}

const packagesBut = (allowed: readonly string[]): Rule => ({
  label: `packages but ${allowed.join(", ")}`,
  find: (imported) => packagesOf(imported).filter((name) => !allowed.includes(name)),
});
const packages = (unwanted: readonly string[]): Rule => ({
  label: unwanted.join(", "),
  find: (imported) => packagesOf(imported).filter((name) => unwanted.includes(name)),
});
const files = (label: string, pattern: RegExp): Rule => ({
  label,
  find: (imported) => imported.filter((url) => pattern.test(url)),
});

/**
 * ajv's schema compiler (and ajv-formats' setup): the precompiled validators need only ajv's
 * run-time helpers (dist/runtime/) and the formats themselves (dist/formats.js).
 */
const SCHEMA_COMPILER = files(
  "ajv's schema compiler",
  /\/node_modules\/(ajv\/dist\/(?!runtime\/)|ajv-formats\/dist\/(?!formats\.js$))/,
);
/** The saved plan's validator: only what reads a saved plan needs it. */
const PLAN_VALIDATOR = files(
  "the saved plan's validator",
  /\/dist\/src\/plan\/plan-validator\.generated\.js$/,
);
const CONNECTED_RULES: readonly Rule[] = [
  SCHEMA_COMPILER,
  // undici's index loads every part of it; the client imports the parts it uses.
  files("undici's index", /\/node_modules\/undici\/index\.js$/),
  files("diff's index", /\/node_modules\/diff\/libesm\/index\.js$/),
  packages(["prom-client", "yaml"]),
  files("the emulator or the watcher", /\/dist\/src\/(emulator|watch)\//),
];

const COMMANDS: readonly Command[] = [
  {
    label: "pcsync --version",
    args: () => ["--version"],
    connects: false,
    commands: [],
    rules: [
      packagesBut(["commander"]),
      files("the manifest, client, plan or render", /\/dist\/src\/(manifest|api\/client|render|plan)\b/),
    ],
  },
  {
    label: "pcsync validate -f examples/",
    args: () => ["validate", "-f", EXAMPLES],
    connects: false,
    commands: ["validate"],
    // Only plan, apply, export, logs, serve or the response checks need these, or the unbundled yaml.
    rules: [packages(["undici", "diff", "yaml"]), SCHEMA_COMPILER],
  },
  {
    label: "pcsync plan -f examples/ -o plan.json",
    args: (planFile) => ["plan", "-f", EXAMPLES, "-o", planFile],
    connects: true,
    commands: ["plan"],
    rules: [...CONNECTED_RULES, PLAN_VALIDATOR],
  },
  {
    label: "pcsync apply --plan plan.json --dry-run",
    args: (planFile) => ["apply", "--plan", planFile, "--dry-run"],
    connects: true,
    commands: ["apply"],
    rules: CONNECTED_RULES,
  },
];

/** Runs the built CLI under the recorder and returns the URL of every module it loaded, each once. */
export function runRecordingImports(args: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const directory = mkdtempSync(join(tmpdir(), "pcsync-imports-"));
  const file = join(directory, "imports.txt");
  try {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...env, NODE_OPTIONS: `--import="${RECORDER}"`, PCSYNC_TEST_IMPORTS_FILE: file },
    });
    if (result.status !== 0) {
      throw new Error(
        `pcsync ${args.join(" ")} exited with ${String(result.status)}: ${String(result.stderr)}`,
      );
    }
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "");
    return [...new Set(lines)];
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

async function runStartupImports(): Promise<ScenarioResult> {
  const emulator = await startEmulatorThread({ keys: [{ key: API_KEY, scopes: null, projects: "*" }] });
  const directory = mkdtempSync(join(tmpdir(), "pcsync-imports-plan-"));
  const rows: Row[] = [];
  try {
    const planFile = join(directory, "plan.json");
    for (const command of COMMANDS) {
      const env = command.connects
        ? { ...process.env, PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: API_KEY }
        : process.env;
      const imported = runRecordingImports(command.args(planFile), env);
      const own = imported.filter((url) => /\/dist\/src\//.test(url));
      const dependencies = imported.filter((url) => url.includes("/node_modules/"));
      rows.push({
        metric: `${command.label}: modules loaded`,
        value: `${own.length} of pcsync's, ${dependencies.length} files of ${packagesOf(imported).join(", ") || "no package"}`,
      });
      const commands = commandModules(imported);
      rows.push({
        metric: `${command.label}: command modules`,
        value: commands.join(", ") || "none",
        target: command.commands.join(", ") || "none",
        pass: sameList(commands, command.commands),
      });
      for (const rule of command.rules) {
        const found = rule.find(imported);
        rows.push({
          metric: `${command.label}: loads no ${rule.label}`,
          value:
            found.length === 0
              ? "none"
              : found.map((url) => url.replace(/^.*\/(node_modules|dist)\//, "")).join(", "),
          target: "none",
          pass: found.length === 0,
        });
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await emulator.close();
  }
  return {
    id: "startup-imports",
    title: `modules loaded by ${COMMANDS.map((command) => command.label).join("; ")}`,
    rows,
  };
}

export const STARTUP_IMPORT_SCENARIOS: readonly Scenario[] = [
  {
    id: "startup-imports",
    title: "modules each of --version, validate, plan and apply --plan loads, and what none of them may load",
    default: true,
    run: runStartupImports,
  },
];
