// Loading the manifest a run names (its files, --var and --var-file values, PCSYNC_VAR_*), with its
// warnings and errors printed (and annotated on GitHub Actions); and the files a run reads.

import type { RunInput } from "../files/output-target.js";
import { InputError } from "../input-error.js";
import {
  DEFAULT_MANIFEST_PATH,
  formatDiagnostic,
  formatGithubAnnotation,
  type LoadedManifest,
  type LoadOptions,
  type LoadResult,
  loadManifests,
  loadVariables,
  type ManifestVariables,
  parseVariableAssignment,
  type VariableAssignment,
} from "../manifest/index.js";
import { readKeyFile } from "./credentials.js";
import type { RunIo } from "./run-io.js";

/** The manifest files, `--var` assignments and var files of a run, and its API key file. */
export interface ManifestInput {
  file: string[];
  var?: string[];
  varFile?: string[];
  apiKeyFile?: string;
}

/**
 * The files a run reads, which its outputs may not replace: the manifests (unless `manifests`
 * is false: export updates its own target, and `apply --plan` reads none), the saved plan, the var
 * files and the API key file.
 */
export function runInputs(
  flags: Partial<ManifestInput>,
  options: { manifests: boolean; savedPlan?: string | undefined },
): RunInput[] {
  const manifests =
    flags.file === undefined || flags.file.length === 0 ? [DEFAULT_MANIFEST_PATH] : flags.file;
  return [
    ...(options.manifests ? manifests.map((path) => ({ path, what: "a manifest (-f)" })) : []),
    ...(options.savedPlan === undefined
      ? []
      : [{ path: options.savedPlan, what: "the saved plan (--plan)" }]),
    ...(flags.varFile ?? []).map((path) => ({ path, what: "a var file (--var-file)" })),
    ...(flags.apiKeyFile === undefined ? [] : [{ path: flags.apiKeyFile, what: "the API key file" }]),
  ];
}

/** The `--var` arguments as assignments; a malformed one is a usage error that never quotes it. */
export function parseVariableFlags(values: readonly string[] | undefined): VariableAssignment[] {
  return (values ?? []).map((argument, index) => {
    const parsed = parseVariableAssignment(argument);
    if ("problem" in parsed) {
      const which = values !== undefined && values.length > 1 ? ` (the ${ordinal(index + 1)} one)` : "";
      throw new InputError("usage", `--var${which} ${parsed.problem}; write --var NAME=VALUE`);
    }
    return parsed;
  });
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/**
 * Loads the manifests with the variables the flags and PCSYNC_VAR_* give. The API key, from the
 * environment or the key file, is handed over so that no value may contain it; a key file that
 * cannot be read is left for the connection to report.
 */
export async function loadManifest(flags: ManifestInput, io: RunIo): Promise<LoadResult> {
  return loadManifests(flags.file, await variableOptions(flags, io));
}

async function variableOptions(flags: Omit<ManifestInput, "file">, io: RunIo): Promise<LoadOptions> {
  const assignments = parseVariableFlags(flags.var);
  const key = flags.apiKeyFile && (await readKeyFile(flags.apiKeyFile, io.cwd).catch(() => undefined));
  return { env: io.env, cwd: io.cwd, varFiles: flags.varFile ?? [], assignments, secrets: key ? [key] : [] };
}

/**
 * The variables alone (export -o matches an existing manifest's `${NAME}` with them); var-file
 * problems are printed like manifest ones and end the command.
 */
export async function loadVariablesOrThrow(
  flags: Omit<ManifestInput, "file">,
  io: RunIo,
): Promise<ManifestVariables> {
  const result = await loadVariables(await variableOptions(flags, io));
  printDiagnostics({ ...result, value: undefined, files: [] }, io);
  if (result.errors.length > 0) throw new InputError("manifest_invalid", { diagnostics: result.errors });
  return result.variables;
}

/**
 * Loads the manifests and prints their warnings and errors (file:line:col on stderr, plus
 * `::error` annotations when GITHUB_ACTIONS=true). Throws InputError after printing, so the
 * top-level handler only adds a one-line summary.
 */
export async function loadManifestOrThrow(flags: ManifestInput, io: RunIo): Promise<LoadedManifest> {
  const result = await loadManifest(flags, io);
  printDiagnostics(result, io);
  if (result.errors.length > 0 || result.value === undefined)
    throw new InputError("manifest_invalid", { diagnostics: result.errors });
  return result.value;
}

/**
 * Prints the warnings and errors as file:line:col on stderr (`text: false`: only the GitHub
 * annotations, for `validate --format json`, whose document holds them).
 */
export function printDiagnostics(
  result: LoadResult,
  io: RunIo,
  options: { text: boolean } = { text: true },
): void {
  const diagnostics = [...result.errors, ...result.warnings];
  if (options.text)
    for (const diagnostic of diagnostics) io.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  if (io.env.GITHUB_ACTIONS === "true") {
    // The runner reads workflow commands from stderr too, which keeps stdout for results (a JSON plan).
    for (const diagnostic of diagnostics) io.stderr.write(`${formatGithubAnnotation(diagnostic)}\n`);
  }
}
