// `pcsync validate`: checks the manifest offline (schema and semantic checks) and prints every
// problem as file:line:col.

import { EXIT_ERROR } from "../../errors.js";
import { InputError } from "../../input-error.js";
import { formatSource, type LoadedManifest, type LoadResult } from "../../manifest/index.js";
import { plural } from "../../plural.js";
import { loadManifest, type ManifestInput, printDiagnostics } from "../../run/load-manifest.js";
import { type CommandRegistrar, newCommand } from "../command.js";
import { addManifestOption, formatOption, TEXT_OR_JSON, type TextOrJson } from "../shared-options.js";

/**
 * `validate --format json`, whether the manifest is valid or not; line and col are 0 for a problem of
 * a whole file. The counts hold only the projects the manifest names, not those of `projects: all`.
 */
export function validationDocument(result: LoadResult): string {
  const value = result.errors.length === 0 ? result.value : undefined;
  const document = {
    version: 1,
    valid: value !== undefined,
    files: result.files,
    summary: {
      projects: value === undefined ? null : countProjects(value),
      configs: value === undefined ? null : countConfigs(value),
      errors: result.errors.length,
      warnings: result.warnings.length,
    },
    resolvedAtPlanTime: setsOfAllProjects(value).map((set) => ({
      set: set.label,
      file: set.source.file,
      line: set.source.line,
    })),
    diagnostics: [...result.errors, ...result.warnings].map(({ file, line, col, severity, message }) => ({
      file,
      line,
      col,
      severity,
      message,
    })),
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

function setsOfAllProjects(desired: LoadedManifest | undefined) {
  return desired?.unresolved?.sets.filter((set) => set.projects === "all") ?? [];
}

function countProjects(desired: LoadedManifest): number {
  return new Set(desired.families.map((family) => family.project)).size;
}

function countConfigs(desired: LoadedManifest): number {
  return desired.families.reduce((count, family) => count + family.configs.length, 0);
}

export const registerValidateCommand: CommandRegistrar = (io, setExit) => {
  const command = newCommand(
    "validate",
    "Check the manifest offline: schema and semantic checks; prints every problem as file:line:col.",
    `
Exit status: 0 when the manifest is valid, 1 when it is not.

Examples:
  $ pcsync validate                           # reads pcsync.yaml
  $ pcsync validate -f examples/              # every *.yaml/*.yml in the directory, merged
  $ pcsync validate -f base.yaml -f prod.yaml
  $ pcsync validate --var-file prod.vars.yaml --var PROJECT_ID=42   # values for \${NAME}
  $ pcsync validate --format json | jq '.diagnostics[] | select(.severity == "error")'

Variables: \${NAME} in the manifest reads PCSYNC_VAR_NAME from the environment, then each
--var-file in order, then --var NAME=VALUE (the last one wins); no other environment variable.
The API key is never interpolated.`,
  ).addOption(formatOption("text, or json: one document with every diagnostic, on stdout", TEXT_OR_JSON));
  addManifestOption(command);
  return command.action(async (flags: ManifestInput & { format: TextOrJson }) => {
    const result = await loadManifest(flags, io);
    const invalid = result.errors.length > 0 || result.value === undefined;
    if (flags.format === "json") {
      printDiagnostics(result, io, { text: false });
      io.stdout.write(validationDocument(result));
      // The document is the whole answer, the invalid one too: its exit code, but no error line.
      if (invalid) setExit(EXIT_ERROR);
      return;
    }
    printDiagnostics(result, io);
    // The summary line and exit code come from the one error path, as every command's do.
    if (invalid || result.value === undefined)
      throw new InputError("manifest_invalid", { diagnostics: result.errors });
    const projects = countProjects(result.value);
    const configs = countConfigs(result.value);
    io.stdout.write(
      `ok: ${plural(projects, "project")}, ${plural(configs, "config")} (${plural(result.files.length, "file")})\n`,
    );
    for (const set of setsOfAllProjects(result.value)) {
      io.stdout.write(
        `project set "${set.label}" (${formatSource(set.source)}) says projects: all, resolved at plan time from the projects the API key can see; counted above: only the projects the manifest names\n`,
      );
    }
  });
};
