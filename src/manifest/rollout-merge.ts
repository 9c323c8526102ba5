// `rollout:` across the files of one run: at most one file says it (a second is an error naming
// the first), and a wave names only projects the manifest manages.

import type { ManifestDiagnostic } from "./diagnostics.js";
import { makeError } from "./diagnostics.js";
import type { ManifestFacts } from "./semantic-checks.js";
import type { RolloutSpec } from "./types.js";

export interface MergedRollout {
  rollout: RolloutSpec | undefined;
  errors: ManifestDiagnostic[];
  /**
   * The errors of waves that name a project the manifest does not manage. With a set that says
   * `projects: all`, its projects are known only at plan time: named projects are not checked.
   */
  checkProjects(managed: ReadonlySet<string>, resolvedAtPlanTime: boolean): ManifestDiagnostic[];
}

export function mergeRollouts(files: readonly { file: string; facts: ManifestFacts }[]): MergedRollout {
  const placed = files
    .flatMap(({ file, facts }) => (facts.rollout === undefined ? [] : [{ file, fact: facts.rollout }]))
    .sort((a, b) =>
      a.file < b.file ? -1 : a.file > b.file ? 1 : a.fact.position.line - b.fact.position.line,
    );
  const [first, ...others] = placed;
  const errors = others.map(({ file, fact }) =>
    makeError(
      file,
      fact.position,
      `rollout is also set at ${first?.file}:${first?.fact.position.line}; one file of a manifest says how it rolls out`,
    ),
  );
  if (first === undefined) return { rollout: undefined, errors, checkProjects: () => [] };
  const { file, fact } = first;
  const rollout: RolloutSpec = {
    waves: fact.waves.map((wave) => {
      const spec: RolloutSpec["waves"][number] = {
        name: wave.name,
        source: { file, line: wave.position.line, col: wave.position.col },
      };
      if (wave.projects !== undefined) spec.projects = wave.projects;
      if (wave.percent !== undefined) spec.percent = wave.percent;
      return spec;
    }),
    bakeMs: fact.bakeMs,
    health: fact.health,
    failureBudget: fact.failureBudget,
    onFailure: fact.onFailure,
    source: { file, line: fact.position.line, col: fact.position.col },
  };
  return {
    rollout,
    errors,
    checkProjects(managed, resolvedAtPlanTime) {
      if (resolvedAtPlanTime) return [];
      return fact.waves.flatMap((wave) =>
        (wave.projects ?? []).flatMap((project, index) =>
          managed.has(project)
            ? []
            : [
                makeError(
                  file,
                  wave.projectPositions?.[index] ?? wave.position,
                  `wave "${wave.name}" names project "${project}", which the manifest does not manage; name projects under \`projects:\` (or a project set)`,
                ),
              ],
        ),
      );
    },
  };
}
