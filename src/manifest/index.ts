// Loads manifest files into the desired state: read, parse with positions, interpolate, validate
// against the schema, check semantics, merge. Problems come back as diagnostics, never thrown.

import { buildDesiredFamilies } from "./desired-state.js";
import {
  formatDiagnostic,
  formatGithubAnnotation,
  type ManifestDiagnostic,
  makeError,
  makeWarning,
  sortDiagnostics,
} from "./diagnostics.js";
import { interpolateTree } from "./interpolate.js";
import { parseYamlWithPositions, type YamlProblem } from "./load-yaml.js";
import { type LoadedManifestFile, mergeManifestFiles } from "./merge.js";
import { type ManifestSource, readManifestSources } from "./read-files.js";
import { toPlainManifest, validateManifestSchema } from "./schema-validate.js";
import { checkManifestSemantics } from "./semantic-checks.js";
import type { DesiredState } from "./types.js";

export type { ManifestDiagnostic } from "./diagnostics.js";
export { ManifestError, summarizeErrors } from "./manifest-error.js";
export { DEFAULT_MANIFEST_PATH } from "./read-files.js";
export type * from "./types.js";
export { formatDiagnostic, formatGithubAnnotation };

export interface LoadResult {
  /** The merged desired state; undefined when there is any error. */
  value: DesiredState | undefined;
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
  /** The files read, as named in diagnostics, in the order read. */
  files: string[];
}

export interface LoadOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** Most errors reported per file: past that, hostile or mangled input only adds noise. */
export const MAX_ERRORS_PER_FILE = 100;

/** Reads the manifests at `paths` (files or directories; none means `pcsync.yaml`). */
export async function loadManifests(paths: readonly string[], options: LoadOptions): Promise<LoadResult> {
  const read = await readManifestSources(paths, options.cwd);
  const loaded = loadManifestSources(read.sources, options.env);
  const files = read.sources.map((source) => source.file);
  const order = [...new Set([...paths, ...files, ...read.errors.map((error) => error.file)])];
  const errors = sortDiagnostics([...read.errors, ...loaded.errors], order);
  return {
    value: errors.length > 0 ? undefined : loaded.value,
    errors,
    warnings: sortDiagnostics([...read.warnings, ...loaded.warnings], order),
    files,
  };
}

/** The pure part of loadManifests: manifest texts in, desired state or diagnostics out. */
export function loadManifestSources(sources: readonly ManifestSource[], env: NodeJS.ProcessEnv): LoadResult {
  const errors: ManifestDiagnostic[] = [];
  const warnings: ManifestDiagnostic[] = [];
  const loadedFiles: LoadedManifestFile[] = [];
  for (const source of sources) {
    const result = loadOneManifest(source, env);
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    if (result.loaded !== undefined) loadedFiles.push(result.loaded);
  }
  const merged = mergeManifestFiles(loadedFiles);
  errors.push(...merged.errors);
  const files = sources.map((source) => source.file);
  return {
    value: errors.length > 0 ? undefined : merged.state,
    errors: sortDiagnostics(errors, files),
    warnings: sortDiagnostics(warnings, files),
    files,
  };
}

function loadOneManifest(
  source: ManifestSource,
  env: NodeJS.ProcessEnv,
): { errors: ManifestDiagnostic[]; warnings: ManifestDiagnostic[]; loaded: LoadedManifestFile | undefined } {
  const { file } = source;
  const toErrors = (problems: readonly YamlProblem[]) =>
    problems.map((problem) => makeError(file, problem.position, problem.message));
  const toWarnings = (problems: readonly YamlProblem[]) =>
    problems.map((problem) => makeWarning(file, problem.position, problem.message));

  const parsed = parseYamlWithPositions(source.text);
  const warnings = toWarnings(parsed.warnings);
  if (parsed.fatal) return { errors: capErrors(file, toErrors(parsed.errors)), warnings, loaded: undefined };
  if (parsed.root === undefined) {
    const error = makeError(file, { line: 1, col: 1 }, "file is empty; a manifest starts with `version: 1`");
    return { errors: [error], warnings, loaded: undefined };
  }

  const interpolated = interpolateTree(parsed.root, env, parsed.positionAt);
  const plain = toPlainManifest(interpolated.root);
  const schema = validateManifestSchema(plain);
  const semantics = checkManifestSemantics(plain);
  warnings.push(...toWarnings(semantics.warnings));

  // A value whose variable is unset (or whose anchor is unknown) fails the schema too; that second
  // error, on the same line, would only repeat the first.
  const earlyErrors = [...parsed.errors, ...interpolated.errors];
  const earlyLines = new Set(earlyErrors.map((problem) => problem.position.line));
  const consequences = [...schema.errors, ...semantics.errors].filter(
    (problem) => !earlyLines.has(problem.position.line),
  );
  const errors = capErrors(file, toErrors([...earlyErrors, ...consequences]), schema.omitted);
  const families =
    errors.length === 0 && schema.manifest !== undefined
      ? buildDesiredFamilies(file, schema.manifest, plain.locations)
      : undefined;
  return { errors, warnings, loaded: { file, families, facts: semantics.facts } };
}

function capErrors(file: string, errors: ManifestDiagnostic[], omitted = 0): ManifestDiagnostic[] {
  if (errors.length <= MAX_ERRORS_PER_FILE) return errors;
  const sorted = sortDiagnostics(errors, [file]);
  const shown = sorted.slice(0, MAX_ERRORS_PER_FILE);
  const last = shown.at(-1);
  shown.push(
    makeError(
      file,
      { line: last?.line ?? 1, col: last?.col ?? 1 },
      `${errors.length - MAX_ERRORS_PER_FILE + omitted} more errors not shown; fix the ones above first`,
    ),
  );
  return shown;
}
