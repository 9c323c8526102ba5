// A build that lacks a precompiled validator, or has one that cannot load (a dependency left out of
// the package, a file cut short), stops with one clear message and exit 1 (src/precompiled.ts):
// it never falls back to compiling schemas at every run, in the package as in the action's bundle.

import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EXAMPLES, REPOSITORY } from "../support/paths.js";

const copies = mkdtempSync(join(tmpdir(), "pcsync-broken-build-"));
afterAll(() => rmSync(copies, { recursive: true, force: true }));

/** A copy of the built package (dist/src, schemas, package.json; node_modules linked), damaged by `damage`. */
function damagedPackage(name: string, damage: (root: string) => void): string {
  const root = join(copies, name);
  cpSync(join(REPOSITORY, "dist", "src"), join(root, "dist", "src"), {
    recursive: true,
    filter: (source) => !source.endsWith(".map"),
  });
  cpSync(join(REPOSITORY, "schemas"), join(root, "schemas"), { recursive: true });
  cpSync(join(REPOSITORY, "package.json"), join(root, "package.json"));
  symlinkSync(join(REPOSITORY, "node_modules"), join(root, "node_modules"), "dir");
  damage(root);
  return join(root, "dist", "src", "cli", "main.js");
}

function run(entry: string, args: readonly string[]) {
  const result = spawnSync(process.execPath, [entry, ...args], {
    cwd: copies,
    // A server that is never reached: the command stops while it loads.
    env: {
      PATH: process.env.PATH ?? "",
      NO_COLOR: "1",
      PCSYNC_BASE_URL: "http://127.0.0.1:9",
      PCSYNC_API_KEY: "phx_never_sent_anywhere",
    },
    encoding: "utf8",
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const REMEDY = "). Reinstall pcsync; in a clone of its repository, run `npm run build` (or `npm ci`).";

function expectBroken(result: ReturnType<typeof run>, what: string, reason: string | RegExp): void {
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  const [first, ...rest] = result.stderr.split("\n");
  expect(first).toContain(
    `pcsync: this copy of pcsync is broken: it cannot load ${what}, which its build compiles ahead of time (`,
  );
  expect(first).toMatch(reason);
  expect(first?.endsWith(REMEDY)).toBe(true);
  expect(rest.join("\n")).toBe("");
}

describe("a build without its precompiled validators stops, with a message that says how to repair it", () => {
  it("the response validators missing: plan", () => {
    const entry = damagedPackage("no-response-validators", (root) =>
      unlinkSync(join(root, "dist", "src", "api", "validators.generated.js")),
    );
    expectBroken(
      run(entry, ["plan", "-f", EXAMPLES]),
      "the API response validators",
      /Cannot find module '.*validators\.generated\.js'/,
    );
    // What needs no validator still runs.
    expect(run(entry, ["--version"]).code).toBe(0);
  });

  it("the manifest validator needs a dependency the install lacks, the plan validator is cut short", () => {
    // One damage per copy: a command may load both validators at once, and which fails first is not
    // defined; each message must name the one that is broken.
    const manifestDamaged = damagedPackage("damaged-manifest-validator", (root) =>
      writeFileSync(
        join(root, "dist", "src", "manifest", "manifest-validator.generated.js"),
        'import "ajv-helpers-left-out";\nexport const validate = () => true;\n',
      ),
    );
    expectBroken(
      run(manifestDamaged, ["validate", "-f", EXAMPLES]),
      "the manifest validator",
      /Cannot find package 'ajv-helpers-left-out'/,
    );
    const planDamaged = damagedPackage("damaged-plan-validator", (root) =>
      writeFileSync(
        join(root, "dist", "src", "plan", "plan-validator.generated.js"),
        "export const validate = (",
      ),
    );
    expectBroken(
      run(planDamaged, ["apply", "--plan", "plan.json"]),
      "the plan file validator",
      /SyntaxError|Unexpected/,
    );
  });

  it("the action's bundle without its response validators: plan", () => {
    // The action runs its bundle from a checkout of the repository: package.json beside it.
    const bundle = join(copies, "action", "action-dist");
    cpSync(join(REPOSITORY, "dist", "bundle"), bundle, { recursive: true });
    cpSync(join(REPOSITORY, "package.json"), join(copies, "action", "package.json"));
    unlinkSync(join(bundle, "chunks", "validators.generated.mjs"));
    expectBroken(
      run(join(bundle, "pcsync.mjs"), ["plan", "-f", EXAMPLES]),
      "the API response validators",
      /Cannot find module '.*validators\.generated\.mjs'/,
    );
  });
});
