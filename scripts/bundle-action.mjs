// Bundles the built CLI (dist/src/cli/main.js) and its runtime dependencies, one chunk per command
// and a few chunks of what commands share (CHUNK_GROUPS):
// the npm package's bin (dist/bundle/, which starts faster than the tree of modules it is made
// from), and the GitHub Action's action-dist/, so that the job holding the write key runs pcsync
// with no `npm ci` and no build. The licence notices of everything bundled go beside it.
//
//   node scripts/bundle-action.mjs DIRECTORY
//
// `npm run build` writes dist/bundle/ (the bin, and what the action's tests run); `npm run bundle` writes
// action-dist/, committed at each of the action's refs. CI's check-dist job runs `npm run bundle`
// again and fails when the committed files differ from it.

import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = fileURLToPath(new URL("..", import.meta.url));
if (process.argv[2] === undefined) {
  process.stderr.write("usage: node scripts/bundle-action.mjs DIRECTORY (e.g. action-dist)\n");
  process.exit(1);
}
const outputDirectory = join(root, process.argv[2]);
const require = createRequire(join(root, "package.json"));

// The precompiled validators reach ajv's runtime helpers through createRequire (standalone code
// needs them); in the bundle they are imports, so that nothing is looked up in node_modules at run
// time. Every require() of a generated module becomes one, whichever helpers its schema needs.
const requiresAsImports = {
  name: "generated-requires-as-imports",
  transform(code, id) {
    if (!id.endsWith(".generated.js") || !code.includes("createRequire(import.meta.url)")) return undefined;
    const names = [...new Set(Array.from(code.matchAll(/\brequire\("([^"]+)"\)/g), (match) => match[1]))];
    const imports = names
      .map((name, index) => `import * as required${index} from ${JSON.stringify(`${name}.js`)};`)
      .join("\n");
    const table = names.map((name, index) => `${JSON.stringify(name)}: required${index}`).join(", ");
    return code
      .replace('import { createRequire } from "node:module";', imports)
      .replace(
        "const require = createRequire(import.meta.url);",
        `const require = (name) => { const found = { ${table} }[name]; if (found === undefined) throw new Error("not bundled: " + name); return found.default?.__esModule ? found.default : found; };`,
      );
  },
};

// Modules loaded at start-up for something a run may never use, deferred in the bundle to the first
// call of what needs them (bench/README.md, start-up), which behaves the same:
// - commander's child_process (with dgram and the rest), for executable subcommands pcsync has not;
// - undici's HTTP/2 client (node:http2, node:tls), for a server that offers h2, which undici does
//   not ask for by default;
// - the yaml library, for the manifests the fast block reader leaves to it (most need none of it):
//   rolldown bundles a require() of an ES module as an init function called at that require.
// A module whose text no longer matches fails the build, so that the saving is not lost unseen.
const DEFERRALS = [
  {
    module: "node_modules/commander/lib/command.js",
    replace: [
      [
        "const childProcess = require('node:child_process');",
        "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      ],
    ],
  },
  {
    module: "node_modules/undici/lib/dispatcher/client.js",
    replace: [
      [
        "const connectH2 = require('./client-h2.js')",
        "const connectH2 = (client, socket) => require('./client-h2.js')(client, socket)",
      ],
    ],
  },
  {
    module: "dist/src/manifest/yaml-library.js",
    replace: [
      ['import * as yaml from "../vendor/yaml.js";', "let yaml;"],
      ["return yaml;", 'return (yaml ??= require("../vendor/yaml.js"));'],
    ],
  },
];

const deferLoads = {
  name: "defer-loads",
  transform(code, id) {
    const normalised = id.replaceAll("\\", "/");
    const deferral = DEFERRALS.find((entry) => normalised.endsWith(entry.module));
    if (deferral === undefined) return undefined;
    return deferral.replace.reduce((text, [from, to]) => {
      if (!text.includes(from))
        throw new Error(`${deferral.module} changed: "${from}" is gone; update DEFERRALS`);
      return text.replace(from, to);
    }, code);
  },
};

/** The directories of the packages a bundle holds, by name, from the module ids rolldown saw. */
function bundledPackages(moduleIds) {
  const directories = new Map();
  for (const id of moduleIds) {
    const match = /^(.*node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+))[\\/]/.exec(id);
    if (match) directories.set(match[2].replace("\\", "/"), match[1]);
  }
  return directories;
}

function licenceOf(name, directory) {
  const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8"));
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license", "LICENCE"]
    .map((candidate) => join(directory, candidate))
    .find((candidate) => {
      try {
        readFileSync(candidate);
        return true;
      } catch {
        return false;
      }
    });
  if (file === undefined) throw new Error(`${name} has no licence file to bundle`);
  return `## ${name} ${manifest.version} (${manifest.license})\n\n${readFileSync(file, "utf8").trim()}\n`;
}

rmSync(outputDirectory, { recursive: true, force: true });
mkdirSync(outputDirectory, { recursive: true });
const seen = new Set();
/** Each module's static imports, by id, as rolldown parsed them. */
const staticImports = new Map();

/** `id` and every module it imports statically, directly or not. */
function staticClosure(id) {
  const closure = new Set();
  const pending = [id];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (closure.has(next) || !staticImports.has(next)) continue;
    closure.add(next);
    pending.push(...staticImports.get(next));
  }
  return closure;
}

// The ES module loader pays for each file it loads (resolve, stat, read, link), about as much as for
// a few kilobytes of code: the `plan` of a small manifest loaded 43 files. What every command loads
// (the program and its output edge) is one chunk, what validate shares with plan (the manifest
// reader) another, and what plan adds to it (the client, undici, the planner) a third, which the
// other commands that reach the service also load whole. The rest stays one chunk per set of
// commands that use it; commands, and what they import dynamically, stay chunks of their own.
const CLI = join(root, "dist", "src", "cli");
const COMMANDS = join(CLI, "commands");
const MAIN = join(CLI, "main.js");
const RUN_BINARY = join(CLI, "run-binary.js");
let closures;
function reachedBy(command) {
  closures ??= {
    main: staticClosure(MAIN),
    every: staticClosure(RUN_BINARY),
    validate: staticClosure(join(COMMANDS, "validate.js")),
    plan: staticClosure(join(COMMANDS, "plan.js")),
  };
  return closures[command];
}
// Groups are made in order of priority, each taking along the modules its modules import, so the
// smaller, earlier ones come first and keep theirs. What main.js loads before it holds signals is a
// chunk of its own (signals are held before the program's modules load), and the run itself
// (run-binary.js) stays out of the program's chunk, which it imports.
const CHUNK_GROUPS = [
  {
    name: "early-signals",
    priority: 4,
    test: (id) => reachedBy("main").has(id) && id !== MAIN,
  },
  {
    name: "common-program",
    priority: 3,
    test: (id) => reachedBy("every").has(id) && id !== RUN_BINARY,
  },
  {
    name: "common-manifest",
    priority: 2,
    test: (id) => !id.startsWith(COMMANDS) && reachedBy("validate").has(id) && reachedBy("plan").has(id),
  },
  {
    name: "common-service",
    priority: 1,
    test: (id) => !id.startsWith(COMMANDS) && reachedBy("plan").has(id),
  },
];

await build({
  cwd: root,
  input: MAIN,
  platform: "node",
  logLevel: "warn",
  plugins: [
    requiresAsImports,
    deferLoads,
    {
      name: "record-modules",
      moduleParsed: (info) => {
        seen.add(info.id);
        staticImports.set(info.id, info.importedIds);
      },
    },
  ],
  output: {
    dir: outputDirectory,
    format: "esm",
    entryFileNames: "pcsync.mjs",
    // Each command in its own chunk, as in dist/, so that a run parses only what it uses; names
    // without hashes, so that a change to the source changes files in place.
    chunkFileNames: "chunks/[name].mjs",
    codeSplitting: { groups: CHUNK_GROUPS },
    banner:
      "// Generated by scripts/bundle-action.mjs (npm run bundle) from dist/; do not edit. Licences: NOTICES.md",
  },
});
// The package's bin (dist/bundle/pcsync.mjs) runs as a command: `npx pcsync` after `npm run build`
// found it not executable (npm sets the mode only when it links the bin, at install).
if (relative(root, outputDirectory) !== "action-dist") chmodSync(join(outputDirectory, "pcsync.mjs"), 0o755);
// yaml was bundled once already, into dist/src/vendor/yaml.js, with its notice.
const directories = bundledPackages(seen);
directories.set("yaml", dirname(require.resolve("yaml/package.json")));
const packages = [...directories.keys()].sort();
writeFileSync(
  join(outputDirectory, "NOTICES.md"),
  `# Third-party code in this bundle\n\nThe files of action-dist/ hold pcsync (MIT, see LICENSE) and the following packages, each under its own licence:\n\n${packages.map((name) => licenceOf(name, directories.get(name))).join("\n")}`,
);
process.stdout.write(
  `bundled ${relative(root, outputDirectory)}/ with ${packages.length} packages: ${packages.join(", ")}\n`,
);
