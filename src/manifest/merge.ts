// Merges the blocks of several manifest files into one DesiredState (expanding templates and
// project sets, expand-manifest.ts), and checks what only shows across files: a project + family
// defined twice, one record id claimed twice, conflicting server URLs. The result does not depend
// on the order the files were given in.

import { appendAll } from "../append-all.js";
import { familyKey } from "../families.js";
import { groupBy } from "../group-by.js";
import { compareText } from "./compare-projects.js";
import { type ManifestDiagnostic, makeError, type Position } from "./diagnostics.js";
import { expandManifest } from "./expand-manifest.js";
import type { ManifestBlocks } from "./expand-types.js";
import type { LoadedManifest } from "./loaded-manifest.js";
import { checkOwnerDescriptions, mergeOwners } from "./owner-checks.js";
import { hasUnresolvedSets } from "./project-sets.js";
import { mergeRollouts } from "./rollout-merge.js";
import type { ManifestFacts } from "./semantic-checks.js";

export interface LoadedManifestFile {
  file: string;
  /** Undefined when the file has errors of its own. */
  blocks: ManifestBlocks | undefined;
  facts: ManifestFacts;
}

interface Placed {
  file: string;
  position: Position;
}

export function mergeManifestFiles(files: readonly LoadedManifestFile[]): {
  state: LoadedManifest | undefined;
  errors: ManifestDiagnostic[];
  warnings: ManifestDiagnostic[];
} {
  const errors: ManifestDiagnostic[] = [];
  const place = (placed: Placed): string => `${placed.file}:${placed.position.line}:${placed.position.col}`;

  // Same project + family in two files.
  const familyBlocks = files.flatMap(({ file, facts }) =>
    facts.familyBlocks.map((block) => ({ ...block, file, key: familyKey(block.project, block.family) })),
  );
  for (const group of sharingKey(familyBlocks, (block) => block.key)) {
    const [first, ...others] = group.sort(comparePlaced);
    if (first === undefined) continue;
    for (const other of others) {
      errors.push(
        makeError(
          other.file,
          other.position,
          `${other.family} of project "${other.project}" is also defined at ${place(first)}; define each project + family in one file`,
        ),
      );
    }
  }

  // One record claimed by two configs.
  const claims = files.flatMap(({ file, facts }) => facts.idClaims.map((claim) => ({ ...claim, file })));
  for (const group of sharingKey(claims, (claim) => String(claim.id))) {
    const [first, ...others] = group.sort(comparePlaced);
    if (first === undefined) continue;
    for (const other of others) {
      const owner = first.name === undefined ? "another config" : `"${first.name}"`;
      errors.push(
        makeError(
          other.file,
          other.position,
          `id ${other.id} is already pinned by ${owner} (${first.family} of project "${first.project}") at ${place(first)}; a record can be managed by one config only`,
        ),
      );
    }
  }

  // server.base_url set differently in two files.
  const baseUrls = files
    .flatMap(({ file, facts }) => (facts.baseUrl === undefined ? [] : [{ ...facts.baseUrl, file }]))
    .sort(comparePlaced);
  const firstBaseUrl = baseUrls[0];
  for (const other of baseUrls.slice(1)) {
    if (firstBaseUrl !== undefined && other.value !== firstBaseUrl.value) {
      errors.push(
        makeError(
          other.file,
          other.position,
          `server.base_url ${JSON.stringify(other.value)} differs from ${JSON.stringify(firstBaseUrl.value)} at ${place(firstBaseUrl)}; set it in one file`,
        ),
      );
    }
  }

  const owners = mergeOwners(
    files
      .flatMap(({ file, facts }) => (facts.owner === undefined ? [] : [{ ...facts.owner, file }]))
      .sort(comparePlaced),
  );
  appendAll(errors, owners.errors);
  appendAll(
    errors,
    checkOwnerDescriptions(
      files.flatMap((file) => file.blocks ?? []),
      owners.owner?.value,
    ),
  );

  const rollouts = mergeRollouts(files);
  appendAll(errors, rollouts.errors);

  if (errors.length > 0 || files.some((file) => file.blocks === undefined))
    return { state: undefined, errors, warnings: [] };
  const blocks = mergeBlocks(files);
  const expanded = expandManifest(blocks);
  if (expanded.errors.length > 0)
    return { state: undefined, errors: expanded.errors, warnings: expanded.warnings };
  const state: LoadedManifest = { families: expanded.families };
  if (rollouts.rollout !== undefined) {
    const unknown = rollouts.checkProjects(
      new Set(expanded.families.map((family) => family.project)),
      hasUnresolvedSets(blocks),
    );
    if (unknown.length > 0) return { state: undefined, errors: unknown, warnings: expanded.warnings };
    state.rollout = rollouts.rollout;
  }
  if (firstBaseUrl !== undefined) {
    const { value, file, position } = firstBaseUrl;
    state.baseUrl = value;
    state.baseUrlSource = { file, line: position.line, col: position.col };
  }
  if (owners.owner !== undefined) {
    const { value, file, position } = owners.owner;
    state.owner = { name: value, source: { file, line: position.line, col: position.col } };
  }
  if (hasUnresolvedSets(blocks)) state.unresolved = blocks;
  return { state, errors, warnings: expanded.warnings };
}

/** The blocks of every file, in file-name order: set order (which set's templates come first) must not depend on the command line. */
function mergeBlocks(files: readonly LoadedManifestFile[]): ManifestBlocks {
  const merged: ManifestBlocks = { templates: [], sets: [], projects: [] };
  for (const { blocks } of [...files].sort((a, b) => compareText(a.file, b.file))) {
    if (blocks === undefined) continue;
    appendAll(merged.templates, blocks.templates);
    appendAll(merged.sets, blocks.sets);
    appendAll(merged.projects, blocks.projects);
  }
  return merged;
}

/** The groups of items sharing a key with another. */
function sharingKey<T>(items: readonly T[], keyOf: (item: T) => string): T[][] {
  return [...groupBy(items, keyOf).values()].filter((group) => group.length > 1);
}

function comparePlaced(a: Placed, b: Placed): number {
  return compareText(a.file, b.file) || a.position.line - b.position.line || a.position.col - b.position.col;
}
