// The code's shape as figures: lines of src/ and of src/api, and what `pcsync plan` loads (its
// modules, the folders they sit in, the imports between folders), read off a real run of the
// built CLI against the example data. The figures the codebase's size aims are judged on.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulatorThread } from "./emulator-thread.js";
import { count, type Row, type Scenario, type ScenarioResult } from "./harness.js";
import { runRecordingImports } from "./scenarios-startup-imports.js";

// From dist/bench/ once built.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST_SRC = join(ROOT, "dist", "src");
const API_KEY = "phx_bench_structure";

/** Every `.ts` file under `directory`, recursively. */
function tsFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

function linesOf(files: readonly string[]): number {
  return files.reduce((sum, file) => sum + readFileSync(file, "utf8").split("\n").length - 1, 0);
}

/** Lines that are neither blank nor comment (`//`, or a line of a `/* ... *\/` block), as cloc counts code. */
function codeLinesOf(files: readonly string[]): number {
  const comment = /^\s*(\/\/|\/\*|\*)/;
  return files.reduce(
    (sum, file) =>
      sum +
      readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "" && !comment.test(line)).length,
    0,
  );
}

/** The folder of a module under src/ ("(root)" for src/*.ts). */
function folderOf(file: string): string {
  const parts = relative(DIST_SRC, file).split("/");
  return parts.length > 1 ? (parts[0] ?? "") : "(root)";
}

/** The relative modules a built file imports statically (`import ... from "./x.js"`). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms)];
  return found.map((match) => resolve(dirname(file), match[1] ?? ""));
}

/** The own modules (built files under dist/src) a run of `args` loads, against the example data. */
async function modulesLoaded(args: readonly string[]): Promise<string[]> {
  const emulator = await startEmulatorThread({ keys: [{ key: API_KEY, scopes: null, projects: "*" }] });
  try {
    const env = { ...process.env, PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: API_KEY };
    return runRecordingImports(args, env)
      .filter((url) => url.startsWith("file:"))
      .map((url) => fileURLToPath(url))
      .filter((path) => path.startsWith(DIST_SRC));
  } finally {
    await emulator.close();
  }
}

async function runStructure(): Promise<ScenarioResult> {
  const src = tsFiles(join(ROOT, "src")).filter((file) => !file.endsWith(".d.ts"));
  const under = (folder: string) => src.filter((file) => file.startsWith(`${join(ROOT, "src", folder)}/`));
  const rollout = under("rollout");
  const api = under("api");
  const rows: Row[] = [
    { metric: "src/: lines (files)", value: `${count(linesOf(src))} (${src.length})` },
    {
      metric: "src/ without src/rollout/: lines",
      value: count(linesOf(src) - linesOf(rollout)),
      target: "< 24,000",
      pass: linesOf(src) - linesOf(rollout) < 24_000,
    },
    {
      metric: "  of which code (neither blank nor comment)",
      value: count(codeLinesOf(src) - codeLinesOf(rollout)),
    },
    {
      metric: "src/api: lines (files)",
      value: `${count(linesOf(api))} (${api.length})`,
      target: "< 3,000",
      pass: linesOf(api) < 3_000,
    },
  ];
  const loaded = await modulesLoaded(["plan", "-f", join(ROOT, "examples", "pcsync.yaml")]);
  const loadedSet = new Set(loaded);
  const folders = new Map<string, number>();
  for (const file of loaded) folders.set(folderOf(file), (folders.get(folderOf(file)) ?? 0) + 1);
  let crossing = 0;
  const pairs = new Set<string>();
  for (const file of loaded) {
    for (const target of staticImports(file)) {
      if (!loadedSet.has(target) || folderOf(target) === folderOf(file)) continue;
      crossing++;
      pairs.add(`${folderOf(file)}->${folderOf(target)}`);
    }
  }
  rows.push(
    { metric: "plan -f examples/pcsync.yaml: own modules loaded", value: count(loaded.length) },
    {
      metric: "  by folder",
      value: [...folders]
        .sort((a, b) => b[1] - a[1])
        .map(([folder, n]) => `${folder} ${n}`)
        .join(", "),
    },
    {
      metric: "  imports between folders (distinct folder pairs)",
      value: `${count(crossing)} (${pairs.size})`,
    },
  );
  return { id: "structure", title: "the code's size, and what `pcsync plan` loads", rows };
}

export const STRUCTURE_SCENARIOS: readonly Scenario[] = [
  {
    id: "structure",
    title: "lines of src/ and src/api, modules and folder crossings of `pcsync plan`",
    default: false,
    run: runStructure,
  },
];
