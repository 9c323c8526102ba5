// What `owner:` asks of the descriptions of a manifest, checked over every file's blocks
// (templates, sets, projects, overrides), so that a text is checked where it is written, once:
// with an owner, the description and its mark must fit in the service's limit; without one, a
// description must not read as carrying a mark (pcsync would strip it, and plan it forever).

import { DESCRIPTION_MAX_LENGTH, looksMarked, markedLength } from "../owner-mark.js";
import { type ManifestDiagnostic, makeError } from "./diagnostics.js";
import type { ManifestBlocks } from "./expand-types.js";
import type { SourceLocation } from "./types.js";

/** Every description written in the blocks, with where its value is. */
function* writtenDescriptions(blocks: ManifestBlocks): Generator<[string, SourceLocation]> {
  const families = [
    ...blocks.templates.flatMap((template) => template.families),
    ...blocks.sets.flatMap((set) => set.families),
    ...blocks.projects.flatMap((project) => project.families),
  ];
  for (const family of families) {
    for (const item of [...(family.configs ?? []), ...family.overrides]) {
      const text = item.fields.description;
      const source = item.fieldSources.description;
      if (typeof text === "string" && source !== undefined) yield [text, source];
    }
  }
}

export function checkOwnerDescriptions(
  blocks: readonly ManifestBlocks[],
  owner: string | undefined,
): ManifestDiagnostic[] {
  const errors: ManifestDiagnostic[] = [];
  for (const block of blocks) {
    for (const [text, source] of writtenDescriptions(block)) {
      const problem = owner === undefined ? markProblem(text) : lengthProblem(text, owner);
      if (problem !== undefined) errors.push(makeError(source.file, source, problem));
    }
  }
  return errors;
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
