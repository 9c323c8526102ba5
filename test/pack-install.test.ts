// Installing pcsync without the registry holding it: the tarball `npm pack` makes, installed
// globally into a fresh prefix, runs from anywhere, with everything it needs in the package.

import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startEmulator } from "../src/emulator/index.js";
import { runBuiltCli } from "./support/cli.js";
import { REPOSITORY } from "./support/paths.js";

const KEY = "phx_pack_install_key_61b0d9e2f4";

describe("npm pack, then npm install -g of the tarball", () => {
  const workdir = mkdtempSync(join(tmpdir(), "pcsync-pack-"));
  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  function npm(args: string[], cwd: string): { stdout: string; stderr: string } {
    const result = spawnSync("npm", [...args, "--no-audit", "--no-fund"], {
      cwd,
      encoding: "utf8",
      timeout: 90_000,
      // Warnings shown, as a user sees them: an install must print none.
      env: { ...process.env, npm_config_update_notifier: "false", npm_config_loglevel: "warn" },
    });
    expect(result.status, `npm ${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(0);
    return { stdout: result.stdout, stderr: result.stderr };
  }

  /**
   * The package's files in a directory of their own, packed with its own prepack and postpack:
   * the suite built dist/ already, so there the build script does nothing.
   */
  function packCopy(): { stdout: string; manifestBefore: string; manifestAfter: string } {
    const copy = join(workdir, "package");
    const manifestBefore = readFileSync(join(REPOSITORY, "package.json"), "utf8");
    const parsed = JSON.parse(manifestBefore) as { scripts: Record<string, string> };
    for (const path of [
      "dist/src",
      "dist/bundle",
      "schemas",
      "examples",
      "README.md",
      "docs",
      "CHANGELOG.md",
      "LICENSE",
    ]) {
      cpSync(join(REPOSITORY, path), join(copy, path), { recursive: true });
    }
    cpSync(join(REPOSITORY, "scripts", "pack-manifest.mjs"), join(copy, "scripts", "pack-manifest.mjs"));
    const copied = { ...parsed, scripts: { ...parsed.scripts, build: "node -e 0" } };
    const copiedText = `${JSON.stringify(copied, null, 2)}\n`;
    writeFileSync(join(copy, "package.json"), copiedText);
    const { stdout } = npm(["pack", "--json", "--pack-destination", workdir], copy);
    const manifestAfter = readFileSync(join(copy, "package.json"), "utf8");
    expect(manifestAfter, "postpack puts package.json back").toBe(copiedText);
    return { stdout, manifestBefore, manifestAfter };
  }

  it("installs a pcsync that runs from anywhere: --version, validate, and a plan against the emulator", async () => {
    const version = (
      JSON.parse(readFileSync(join(REPOSITORY, "package.json"), "utf8")) as { version: string }
    ).version;
    const { stdout: packOutput, manifestBefore } = packCopy();
    // The repository keeps `prepare` (a git install builds), and packing hooks that remove it.
    expect(JSON.parse(manifestBefore)).toMatchObject({
      scripts: { prepare: "npm run build", prepack: expect.stringContaining("pack-manifest.mjs strip") },
    });
    const packed = JSON.parse(packOutput.slice(packOutput.indexOf("["))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]?.files.map((file) => file.path) ?? [];
    // What the CLI loads at run time is in the package; sources, tests and maps are not.
    expect(files).toEqual(
      expect.arrayContaining([
        "dist/bundle/pcsync.mjs",
        "dist/src/cli/main.js",
        "dist/src/api/validators.generated.js",
        "dist/src/manifest/manifest-validator.generated.js",
        "dist/src/vendor/yaml.js",
        "schemas/manifest.schema.json",
        "schemas/plan.schema.json",
        "examples/pcsync.yaml",
        "README.md",
        "docs/guarantees.md",
        "CHANGELOG.md",
        "LICENSE",
        "package.json",
      ]),
    );
    expect(files.filter((file) => /^(src|test|bench|dist\/bench)\/|\.map$/.test(file))).toEqual([]);

    // As a user would: no build happens here, and npm has no install script to warn about.
    const prefix = join(workdir, "prefix");
    const install = npm(
      [
        "install",
        "--global",
        "--prefix",
        prefix,
        "--prefer-offline",
        join(workdir, packed[0]?.filename ?? ""),
      ],
      workdir,
    );
    expect(`${install.stdout}${install.stderr}`).not.toMatch(/install-scripts|allowScripts|allow-scripts/);
    const installedPackage = join(prefix, "lib", "node_modules", "pcsync");
    expect(JSON.parse(readFileSync(join(installedPackage, "package.json"), "utf8"))).not.toHaveProperty(
      "scripts",
    );
    // yaml is bundled, with its ISC notice, and not installed a second time.
    expect(existsSync(join(installedPackage, "node_modules", "yaml"))).toBe(false);
    expect(readFileSync(join(installedPackage, "dist", "src", "vendor", "yaml.js"), "utf8")).toMatch(
      /Copyright Eemeli Aro[\s\S]*Permission to use, copy, modify, and\/or distribute this software/,
    );
    const bin = join(prefix, "bin", "pcsync");
    expect(existsSync(bin)).toBe(true);
    const elsewhere = join(workdir, "elsewhere");
    mkdirSync(elsewhere);
    expect((await runInstalled(bin, ["--version"], elsewhere)).stdout.trim()).toBe(version);
    const manifest = join(prefix, "lib", "node_modules", "pcsync", "examples", "pcsync.yaml");
    const validated = await runInstalled(bin, ["validate", "-f", manifest], elsewhere);
    expect(validated.code, validated.stderr).toBe(0);

    const emulator = await startEmulator({ keys: [{ key: KEY, scopes: ["*"], projects: "*" }] });
    try {
      const env = { PCSYNC_BASE_URL: emulator.url, PCSYNC_API_KEY: KEY };
      const installed = await runInstalled(
        bin,
        ["plan", "-f", manifest, "--detailed-exitcode"],
        elsewhere,
        env,
      );
      expect(installed.code, installed.stderr).toBe(2);
      expect(installed.stdout).toContain("to create");
      // The same plan as the checkout's build makes.
      const built = await runBuiltCli(["plan", "-f", manifest, "--detailed-exitcode"], {
        env,
        cwd: elsewhere,
      });
      expect(installed.stdout).toBe(built.stdout);
    } finally {
      await emulator.close();
    }
  }, 120_000);
});

/** Runs the installed command, from `cwd`, asynchronously (an in-process emulator may answer it). */
function runInstalled(
  bin: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
