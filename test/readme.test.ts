// Runs every shell command of README.md, then of the manual's pages (docs/), in order, as a user
// would: so the manual cannot rot. `npm ci` and `npm test` are what got this test running, so they
// are the only lines skipped.

import { spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_PATH } from "./support/cli.js";
import { freePort } from "./support/free-port.js";
import { REPOSITORY } from "./support/paths.js";

const SKIPPED = new Set(["npm ci", "npm test"]);

interface ShellCommand {
  /** Where it is written: `README.md:12`, `docs/undo.md:30`. */
  place: string;
  command: string;
}

/**
 * The pages whose shell blocks run: the README (it starts the emulator and sets the connection),
 * then the manual in reading order, so that a page may use what an earlier one made.
 */
const PAGES = [
  "README.md",
  "docs/manifest.md",
  "docs/fleets.md",
  "docs/commands.md",
  "docs/undo.md",
  "docs/rollout.md",
];

/** The command lines of a page's ```sh blocks, with their places. */
function extractShellCommands(markdown: string, page: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let inShell = false;
  markdown.split("\n").forEach((text, index) => {
    if (text.startsWith("```")) {
      inShell = !inShell && text.trim() === "```sh";
      return;
    }
    if (inShell && text.trim() !== "" && !text.trim().startsWith("#"))
      commands.push({ place: `${page}:${index + 1}`, command: text.trim() });
  });
  return commands;
}

/** Turns the README's commands into one bash script that checks each command's exit code. */
function buildScript(commands: readonly ShellCommand[], port: number): string {
  // Wait for the emulator to stop: on SIGTERM it folds its journal into --data's file, and the
  // working directory is removed right after the script.
  const lines = ["set -u", "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT"];
  for (const { place, command } of commands) {
    if (SKIPPED.has(command)) continue;
    const run = command.replaceAll(":8000", `:${port}`).replaceAll("--port 8000", `--port ${port}`);
    if (/^pcsync serve .*&$/.test(run)) {
      // The README starts the emulator in the background; wait until it listens.
      lines.push(`${run.slice(0, -1)} > serve.out 2>&1 &`);
      lines.push(
        "for i in $(seq 1 100); do grep -q 'listening on' serve.out 2>/dev/null && break; sleep 0.1; done",
      );
      continue;
    }
    lines.push(`echo "+ ${run.replaceAll('"', '\\"').replaceAll("$", "\\$")}"`);
    lines.push(run);
    lines.push(
      `rc=$?; if [ $rc -ne 0 ]; then echo "${place}: exit $rc: ${command.replaceAll('"', "'").replaceAll("$", "\\$")}" >&2; exit 1; fi`,
    );
  }
  return `${lines.join("\n")}\n`;
}

describe("README.md and the manual", () => {
  const workdir = mkdtempSync(join(tmpdir(), "pcsync-readme-"));
  // The user's TMPDIR: outside the checkout, as on their machine.
  const userTmp = mkdtempSync(join(tmpdir(), "pcsync-readme-tmp-"));
  afterAll(() => {
    rmSync(workdir, { recursive: true, force: true, maxRetries: 5 });
    rmSync(userTmp, { recursive: true, force: true, maxRetries: 5 });
  });

  it("every page with shell commands is run", () => {
    const pagesWithCommands = [
      "README.md",
      ...readdirSync(join(REPOSITORY, "docs")).map((name) => `docs/${name}`),
    ]
      .filter((page) => page.endsWith(".md"))
      .filter((page) => extractShellCommands(readFileSync(join(REPOSITORY, page), "utf8"), page).length > 0);
    expect([...pagesWithCommands].sort()).toEqual([...PAGES].sort());
  });

  it("has shell commands, and every one of them runs", async () => {
    const commands = PAGES.flatMap((page) =>
      extractShellCommands(readFileSync(join(REPOSITORY, page), "utf8"), page),
    );
    expect(commands.map((entry) => entry.command)).toEqual(
      expect.arrayContaining(["npm ci", "npm run demo", "npm test", "pcsync plan -f examples/pcsync.yaml"]),
    );
    // A user's checkout: the examples and schemas next to them, `pcsync` on the PATH.
    cpSync(join(REPOSITORY, "examples"), join(workdir, "examples"), { recursive: true });
    cpSync(join(REPOSITORY, "schemas"), join(workdir, "schemas"), { recursive: true });
    mkdirSync(join(workdir, "bin"));
    writeFileSync(
      join(workdir, "bin", "pcsync"),
      `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`,
    );
    chmodSync(join(workdir, "bin", "pcsync"), 0o755);
    // `npm run demo` is the package's script: run it where package.json is.
    const script = buildScript(commands, await freePort()).replace(
      "\nnpm run demo\n",
      `\n(cd "${REPOSITORY}" && npm run --silent demo)\n`,
    );
    writeFileSync(join(workdir, "readme.sh"), script);
    const result = spawnSync("bash", ["readme.sh"], {
      cwd: workdir,
      encoding: "utf8",
      // A bound for a hung script, not a measure: it takes about 35 s on a quiet machine, and went
      // past 90 s in full runs on a machine at load 20.
      timeout: 180_000,
      env: {
        PATH: `${join(workdir, "bin")}:${process.env.PATH ?? ""}`,
        HOME: workdir,
        TMPDIR: userTmp,
        NO_COLOR: "1",
      },
    });
    expect(result.stderr).not.toMatch(/\.md:\d+: exit/);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain("Done: the second plan shows no changes.");
    expect(result.stdout).toContain("No changes.");
    // What the commands wrote into the checkout leaves `npm run lint` passing.
    const lint = spawnSync(
      join(REPOSITORY, "node_modules", ".bin", "biome"),
      ["check", "--config-path", REPOSITORY, "--no-errors-on-unmatched", workdir],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(lint.status, `${lint.stdout}\n${lint.stderr}`).toBe(0);
  }, 240_000);
});
