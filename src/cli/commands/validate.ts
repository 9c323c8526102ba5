// `pcsync validate`: checks the manifest offline (schema and semantic checks) and prints every
// problem as file:line:col. Also the manifest plumbing plan, apply and export share: the -f option
// and loading with diagnostics printed (and annotated on GitHub Actions).

import { Command, Option } from "commander";
import { EXIT_ERROR } from "../../errors.js";
import {
  type DesiredState,
  formatDiagnostic,
  formatGithubAnnotation,
  type LoadResult,
  loadManifests,
  ManifestError,
  summarizeErrors,
} from "../../manifest/index.js";
import type { CliIo } from "../io.js";
import type { CommandRegistrar } from "../program.js";

interface ValidateFlags {
  file: string[];
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Adds `-f, --file PATH` (repeatable; none means pcsync.yaml); the action gets `flags.file: string[]`. */
export function addManifestOption(command: Command): Command {
  return command.addOption(
    new Option("-f, --file <path>", "manifest file, or directory of *.yaml/*.yml files; repeatable")
      .argParser(collect)
      .default([], "pcsync.yaml"),
  );
}

/**
 * Loads the manifests and prints their warnings and errors (file:line:col on stderr, plus
 * `::error` annotations when GITHUB_ACTIONS=true). Throws ManifestError after printing, so the
 * top-level handler only adds a one-line summary.
 */
export async function loadManifestsOrThrow(paths: readonly string[], io: CliIo): Promise<DesiredState> {
  const result = await loadManifests(paths, { env: io.env, cwd: io.cwd });
  printDiagnostics(result, io);
  if (result.errors.length > 0 || result.value === undefined) throw new ManifestError(result.errors);
  return result.value;
}

function printDiagnostics(result: LoadResult, io: CliIo): void {
  const diagnostics = [...result.errors, ...result.warnings];
  for (const diagnostic of diagnostics) io.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  if (io.env.GITHUB_ACTIONS === "true") {
    // The runner reads workflow commands from stderr too, which keeps stdout for results (a JSON plan).
    for (const diagnostic of diagnostics) io.stderr.write(`${formatGithubAnnotation(diagnostic)}\n`);
  }
}

export const registerValidateCommand: CommandRegistrar = (program, io, setExit) => {
  const command = new Command("validate").description(
    "Check the manifest offline: schema and semantic checks; prints every problem as file:line:col.",
  );
  addManifestOption(command);
  command.addHelpText(
    "after",
    `
Exit status: 0 when the manifest is valid, 1 when it is not.

Examples:
  $ pcsync validate                           # reads pcsync.yaml
  $ pcsync validate -f examples/              # every *.yaml/*.yml in the directory, merged
  $ pcsync validate -f base.yaml -f prod.yaml`,
  );
  command.action(async (flags: ValidateFlags) => {
    const result = await loadManifests(flags.file, { env: io.env, cwd: io.cwd });
    printDiagnostics(result, io);
    if (result.errors.length > 0 || result.value === undefined) {
      io.stderr.write(`pcsync: ${summarizeErrors(result.errors)}\n`);
      setExit(EXIT_ERROR);
      return;
    }
    const projects = new Set(result.value.families.map((family) => family.project)).size;
    const configs = result.value.families.reduce((count, family) => count + family.configs.length, 0);
    io.stdout.write(
      `ok: ${plural(projects, "project")}, ${plural(configs, "config")} (${plural(result.files.length, "file")})\n`,
    );
  });
  program.addCommand(command);
};

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
