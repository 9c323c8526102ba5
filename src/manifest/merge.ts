// Merges the blocks of several manifest files into one DesiredState, whatever the order they were
// given in, and checks what only shows across files (a project + family defined twice, say).

import { appendAll } from "../append-all.js";
import { familyKey } from "../families.js";
import { groupBy } from "../group-by.js";
import { DESCRIPTION_MAX_LENGTH, looksMarked, markedLength } from "../owner-mark.js";
import { compareText } from "./compare-projects.js";
import { formatSource, type ManifestDiagnostic, makeError } from "./diagnostics.js";
import { expandManifest, hasUnresolvedSets } from "./expand.js";
import type { LoadedManifest, ManifestBlocks } from "./expand-types.js";
import type { ManifestFileBlocks } from "./read-manifest-blocks.js";
import type { SourceLocation } from "./types.js";

export interface LoadedManifestFile extends ManifestFileBlocks {
  /** No errors of its own: only then are its blocks expanded. */
  valid: boolean;
}

interface Placed {
  source: SourceLocation;
}

export function mergeManifestFiles(files: readonly LoadedManifestFile[]): {
  state: LoadedManifest | undefined;
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
} {
  const errors: ManifestDiagnostic[] = [];
  const place = ({ source }: Placed): string => `${source.file}:${source.line}:${source.col}`;
  const conflict = ({ source }: Placed, message: string) =>
    errors.push(makeError(source.file, source, message));

  const familyBlocks = files.flatMap(({ blocks }) =>
    blocks.projects.flatMap(({ project, families }) =>
      families.map(({ family, source }) => ({ project, family, source })),
    ),
  );
  for (const [first, other] of repeats(familyBlocks, (block) => familyKey(block.project, block.family))) {
    conflict(
      other,
      `${other.family} of project "${other.project}" is also defined at ${place(first)}; define each project + family in one file`,
    );
  }

  for (const [first, other] of repeats(
    files.flatMap((file) => file.idClaims),
    (claim) => String(claim.id),
  )) {
    const owner = first.name === undefined ? "another config" : `"${first.name}"`;
    conflict(
      other,
      `id ${other.id} is already pinned by ${owner} (${first.family} of project "${first.project}") at ${place(first)}; a record can be managed by one config only`,
    );
  }

  const baseUrls = files.flatMap((file) => file.baseUrl ?? []).sort(comparePlaced);
  for (const [first, other] of repeats(baseUrls, () => "")) {
    if (other.value === first.value) continue;
    conflict(
      other,
      `server.base_url ${JSON.stringify(other.value)} differs from ${JSON.stringify(first.value)} at ${place(first)}; set it in one file`,
    );
  }

  // The first `owner:` (in file order) is the run's.
  const owners = files.flatMap((file) => file.owner ?? []).sort(comparePlaced);
  for (const [first, other] of repeats(owners, () => "")) {
    if (other.value === first.value) continue;
    conflict(
      other,
      `owner ${JSON.stringify(other.value)} differs from ${JSON.stringify(first.value)} at ${formatSource(first.source)}; the files of one run share one owner: run each owner's manifests separately`,
    );
  }
  const [owner] = owners;
  checkOwnerDescriptions(files, owner?.value, errors);

  const rollouts = files.flatMap((file) => file.rollout ?? []).sort(comparePlaced);
  for (const [first, other] of repeats(rollouts, () => "")) {
    conflict(
      other,
      `rollout is also set at ${formatSource(first.source)}; one file of a manifest says how it rolls out`,
    );
  }
  const [rolloutFact] = rollouts;

  if (errors.length > 0 || files.some((file) => !file.valid))
    return { state: undefined, errors, warnings: [] };
  const blocks = mergeBlocks(files);
  const unresolved = hasUnresolvedSets(blocks);
  const expanded = expandManifest(blocks);
  if (expanded.errors.length > 0)
    return { state: undefined, errors: expanded.errors, warnings: expanded.warnings };
  const state: LoadedManifest = { families: expanded.families };
  if (rolloutFact !== undefined) {
    const { projectSources, ...rollout } = rolloutFact;
    const managed = new Set(expanded.families.map((family) => family.project));
    const unknown: ManifestDiagnostic[] = [];
    // With a set that says `projects: all`, its projects are known only at plan time: not checked.
    for (const [waveIndex, wave] of unresolved ? [] : rollout.waves.entries()) {
      for (const [index, project] of (wave.projects ?? []).entries()) {
        if (managed.has(project)) continue;
        const at = projectSources[waveIndex]?.[index] ?? wave.source;
        const message = `wave "${wave.name}" names project "${project}", which the manifest does not manage; name projects under \`projects:\` (or a project set)`;
        unknown.push(makeError(rollout.source.file, at, message));
      }
    }
    if (unknown.length > 0) return { state: undefined, errors: unknown, warnings: expanded.warnings };
    state.rollout = rollout;
  }
  const [baseUrl] = baseUrls;
  if (baseUrl !== undefined) {
    state.baseUrl = baseUrl.value;
    state.baseUrlSource = baseUrl.source;
  }
  if (owner !== undefined) state.owner = { name: owner.value, source: owner.source };
  if (unresolved) state.unresolved = blocks;
  return { state, errors, warnings: expanded.warnings };
}

/**
 * Checked on the blocks, so that a text is checked once, where it is written. With an owner, the
 * description and its mark must fit the service's limit; without one, a description must not read
 * as carrying a mark (pcsync would strip it, and plan it forever).
 */
function checkOwnerDescriptions(
  files: readonly LoadedManifestFile[],
  owner: string | undefined,
  errors: ManifestDiagnostic[],
): void {
  for (const { blocks, valid } of files) {
    if (!valid) continue;
    const families = [...blocks.templates, ...blocks.sets, ...blocks.projects].flatMap(
      (owned) => owned.families,
    );
    for (const family of families) {
      for (const item of [...(family.configs ?? []), ...family.overrides]) {
        const text = item.fields.description;
        const source = item.fieldSources.description;
        if (typeof text !== "string" || source === undefined) continue;
        const problem = owner === undefined ? markProblem(text) : lengthProblem(text, owner);
        if (problem !== undefined) errors.push(makeError(source.file, source, problem));
      }
    }
  }
}

function lengthProblem(text: string, owner: string): string | undefined {
  const length = markedLength(text, owner);
  if (length <= DESCRIPTION_MAX_LENGTH) return undefined;
  return `description is too long with the owner mark of ${JSON.stringify(owner)}: ${length} characters, the service takes at most ${DESCRIPTION_MAX_LENGTH}; shorten it by ${length - DESCRIPTION_MAX_LENGTH} characters`;
}

function markProblem(text: string): string | undefined {
  if (!looksMarked(text)) return undefined;
  return 'description ends in an owner mark ("[pcsync owner=NAME]"), which only pcsync writes (for a manifest with `owner:`): end the text otherwise, or set `owner:` at the top of the manifest';
}

/** In file-name order: which set's templates come first must not depend on the command line. */
function mergeBlocks(files: readonly LoadedManifestFile[]): ManifestBlocks {
  const merged: ManifestBlocks = { templates: [], sets: [], projects: [] };
  for (const { blocks } of [...files].sort((a, b) => compareText(a.file, b.file))) {
    appendAll(merged.templates, blocks.templates);
    appendAll(merged.sets, blocks.sets);
    appendAll(merged.projects, blocks.projects);
  }
  return merged;
}

/** Each item sharing its key with an earlier one (in file order), with the first. */
function* repeats<T extends Placed>(items: readonly T[], keyOf: (item: T) => string): Generator<[T, T]> {
  for (const group of groupBy(items, keyOf).values()) {
    const [first, ...others] = group.sort(comparePlaced);
    if (first !== undefined) for (const other of others) yield [first, other];
  }
}

function comparePlaced({ source: a }: Placed, { source: b }: Placed): number {
  return compareText(a.file, b.file) || a.line - b.line || a.col - b.col;
}
