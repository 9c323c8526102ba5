// Loading a run's manifest (files, --var, --var-file, PCSYNC_VAR_*), its problems printed (annotated on
// GitHub Actions); and the files a run reads.

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

export interface ManifestInput {
  file: string[];
  var?: string[];
  varFile?: string[];
  apiKeyFile?: string;
}

/** Its outputs may not replace them; `manifests` false: export updates its own, `apply --plan` reads none. */
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

/** A malformed `--var` is a usage error that never quotes it. */
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

/** The key file's key is handed over so that no value may hold it; unreadable, the connection reports it. */
export async function loadManifest(flags: ManifestInput, io: RunIo): Promise<LoadResult> {
  return loadManifests(flags.file, await variableOptions(flags, io));
}

async function variableOptions(flags: Omit<ManifestInput, "file">, io: RunIo): Promise<LoadOptions> {
  const assignments = parseVariableFlags(flags.var);
  const key = flags.apiKeyFile && (await readKeyFile(flags.apiKeyFile, io.cwd).catch(() => undefined));
  return { env: io.env, cwd: io.cwd, varFiles: flags.varFile ?? [], assignments, secrets: key ? [key] : [] };
}

/** For export -o, which matches a manifest's `${NAME}` with them; var-file problems end the command. */
export async function loadVariablesOrThrow(
  flags: Omit<ManifestInput, "file">,
  io: RunIo,
): Promise<ManifestVariables> {
  const result = await loadVariables(await variableOptions(flags, io));
  printDiagnostics({ ...result, value: undefined, files: [] }, io);
  if (result.errors.length > 0) throw new InputError("manifest_invalid", { diagnostics: result.errors });
  return result.variables;
}

/** Throws after printing the problems, so the top-level handler only adds a one-line summary. */
export async function loadManifestOrThrow(flags: ManifestInput, io: RunIo): Promise<LoadedManifest> {
  const result = await loadManifest(flags, io);
  printDiagnostics(result, io);
  if (result.errors.length > 0 || result.value === undefined)
    throw new InputError("manifest_invalid", { diagnostics: result.errors });
  return result.value;
}

/** `text: false`: only the GitHub annotations (`validate --format json`'s document holds the rest). */
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
