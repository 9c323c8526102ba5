// Loads manifest files into the desired state (read, parse, interpolate, validate, merge); problems
// come back as diagnostics, never thrown. The one way in from the rest of src/ (test/lint holds it so).

import { appendAll } from "../append-all.js";
import { SecretRegistry } from "../redact.js";
import {
  type ManifestDiagnostic,
  makeError,
  makeWarning,
  sortDiagnostics,
  type YamlProblem,
} from "./diagnostics.js";
import type { LoadedManifest } from "./expand-types.js";
import { keepHeapLeanFor } from "./lean-heap.js";
import { parseYaml } from "./load-yaml.js";
import { type LoadedManifestFile, mergeManifestFiles } from "./merge.js";
import { PlainBuilder } from "./plain-manifest.js";
import { type ManifestSource, readManifestSources, readVarFiles } from "./read-files.js";
import { readManifestBlocks } from "./read-manifest-blocks.js";
import { validateManifestSchema } from "./schema-checks.js";
import {
  type ManifestVariables,
  NO_VARIABLES,
  type ResolvedVariables,
  resolveVariables,
  type VariableInputs,
} from "./variables.js";

export { configFingerprint, familyFingerprint, manifestFingerprint } from "./asked.js";
export {
  formatDiagnostic,
  formatGithubAnnotation,
  formatSource,
  type ManifestDiagnostic,
} from "./diagnostics.js";
export { resolveProjectSets } from "./expand.js";
export type { LoadedManifest } from "./expand-types.js";
export { resolveTextWith } from "./interpolate.js";
export type { Manifest as ManifestDocument } from "./manifest-schema-types.js";
export { DEFAULT_MANIFEST_PATH, readManifestSources, readVarFiles } from "./read-files.js";
export type * from "./types.js";
export {
  type ManifestVariables,
  NO_VARIABLES,
  parseVariableAssignment,
  type VariableAssignment,
  variablesFromEnvironment,
} from "./variables.js";

export interface LoadResult {
  /** Undefined when there is any error. */
  value: LoadedManifest | undefined;
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
  /** As named in diagnostics, in the order read. */
  files: string[];
}

export interface LoadOptions extends Omit<VariableInputs, "varFiles"> {
  cwd: string;
  /** `--var-file` paths, in the order given. */
  varFiles?: readonly string[];
}

/** Past this many errors per file, hostile or mangled input only adds noise. */
const MAX_ERRORS_PER_FILE = 100;

/** `paths`: files or directories; none means `pcsync.yaml`. */
export async function loadManifests(paths: readonly string[], options: LoadOptions): Promise<LoadResult> {
  const vars = await readAndResolveVariables(options);
  const read = await readManifestSources(paths, options.cwd);
  keepHeapLeanFor(read.sources.reduce((total, source) => total + source.text.length, 0));
  const loaded = loadManifestSources(read.sources, vars.variables);
  // Var files first: a broken one explains the unset variables reported in the manifests.
  const order = [
    ...new Set([...vars.order, ...paths, ...loaded.files, ...read.errors.map((error) => error.file)]),
  ];
  const errors = sortAndRedact([...vars.errors, ...read.errors, ...loaded.errors], order, vars.variables);
  return {
    value: errors.length > 0 ? undefined : loaded.value,
    errors,
    warnings: sortAndRedact([...vars.warnings, ...read.warnings, ...loaded.warnings], order, vars.variables),
    files: loaded.files,
  };
}

/** The variables alone, for a command that reads manifest text without loading it (export -o). */
export async function loadVariables(options: LoadOptions): Promise<ResolvedVariables> {
  const { variables, errors, warnings, order } = await readAndResolveVariables(options);
  return {
    variables,
    errors: sortAndRedact(errors, order, variables),
    warnings: sortAndRedact(warnings, order, variables),
  };
}

async function readAndResolveVariables(options: LoadOptions) {
  const varFiles = await readVarFiles(options.varFiles ?? [], options.cwd);
  const resolved = resolveVariables({ ...options, varFiles: varFiles.sources });
  return {
    ...resolved,
    errors: [...varFiles.errors, ...resolved.errors],
    order: [...varFiles.errors, ...varFiles.sources].map((item) => item.file),
  };
}

/** The pure part of loadManifests. Without `variables`, any `${NAME}` without a default is an error. */
export function loadManifestSources(
  sources: readonly ManifestSource[],
  variables: ManifestVariables = NO_VARIABLES,
): LoadResult {
  const errors: ManifestDiagnostic[] = [];
  const warnings: ManifestDiagnostic[] = [];
  const loadedFiles: LoadedManifestFile[] = [];
  for (const source of sources) {
    const result = loadOneManifest(source, variables);
    appendAll(errors, result.errors);
    appendAll(warnings, result.warnings);
    if (result.loaded !== undefined) loadedFiles.push(result.loaded);
  }
  const merged = mergeManifestFiles(loadedFiles);
  appendAll(errors, merged.errors);
  appendAll(warnings, merged.warnings);
  const files = sources.map((source) => source.file);
  return {
    value: errors.length > 0 ? undefined : merged.state,
    errors: sortAndRedact(errors, files, variables),
    warnings: sortAndRedact(warnings, files, variables),
    files,
  };
}

/**
 * Sorts by file (in `order`) and position, and redacts the secrets: the last guard, for a message
 * quoting manifest text the loader had no reason to suspect (the key itself is refused where found).
 */
function sortAndRedact(
  unsorted: readonly ManifestDiagnostic[],
  order: readonly string[],
  { secrets = [] }: ManifestVariables,
): ManifestDiagnostic[] {
  const diagnostics = sortDiagnostics(unsorted, order);
  if (secrets.length === 0) return diagnostics;
  const registry = SecretRegistry.of(secrets);
  return diagnostics.map((diagnostic) => ({
    ...diagnostic,
    message: registry.redact(diagnostic.message).text,
  }));
}

function loadOneManifest(
  source: ManifestSource,
  variables: ManifestVariables,
): { errors: ManifestDiagnostic[]; warnings: ManifestDiagnostic[]; loaded: LoadedManifestFile | undefined } {
  const { file } = source;
  const diagnose = (make: typeof makeError, problems: readonly YamlProblem[]) =>
    problems.map((problem) => make(file, problem.position, problem.message));

  const parsed = parseYaml(source.text, () => new PlainBuilder(source.text, variables));
  const warnings = diagnose(makeWarning, parsed.warnings);
  if (parsed.fatal)
    return { errors: capErrors(file, diagnose(makeError, parsed.errors)), warnings, loaded: undefined };
  const { plain, errors: interpolation } = parsed.built.finish(parsed.positionAt);
  if (plain === undefined) {
    const error = makeError(file, { line: 1, col: 1 }, "file is empty; a manifest starts with `version: 1`");
    return { errors: [error], warnings, loaded: undefined };
  }

  const schema = validateManifestSchema(plain);
  const checked = readManifestBlocks(file, plain);
  appendAll(warnings, diagnose(makeWarning, checked.warnings));

  // A value whose variable is unset (or whose anchor is unknown) fails the schema too; that second
  // error, on the same line, would only repeat the first.
  const earlyErrors = [...parsed.errors, ...interpolation];
  const earlyLines = new Set(earlyErrors.map((problem) => problem.position.line));
  const consequences = [...schema.errors, ...checked.errors].filter(
    (problem) => !earlyLines.has(problem.position.line),
  );
  const errors = capErrors(file, diagnose(makeError, [...earlyErrors, ...consequences]), schema.omitted);
  return { errors, warnings, loaded: { ...checked.read, valid: errors.length === 0 } };
}

function capErrors(file: string, errors: ManifestDiagnostic[], omitted = 0): ManifestDiagnostic[] {
  if (errors.length <= MAX_ERRORS_PER_FILE) return errors;
  const shown = sortDiagnostics(errors, [file]).slice(0, MAX_ERRORS_PER_FILE);
  const last = shown.at(-1);
  const more = errors.length - MAX_ERRORS_PER_FILE + omitted;
  if (last !== undefined)
    shown.push({ ...last, message: `${more} more errors not shown; fix the ones above first` });
  return shown;
}
