// `rollout:` across the files of one run: at most one file says it (a second is an error naming
// the first), and a wave names only projects the manifest manages.

import { compareText } from "./compare-projects.js";
import { type ManifestDiagnostic, makeError } from "./diagnostics.js";
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

export function mergeRollouts(files: readonly { facts: ManifestFacts }[]): MergedRollout {
  const placed = files
    .flatMap(({ facts }) => (facts.rollout === undefined ? [] : [facts.rollout]))
    .sort((a, b) => compareText(a.source.file, b.source.file) || a.source.line - b.source.line);
  const [first, ...others] = placed;
  const errors = others.map(({ source }) =>
    makeError(
      source.file,
      source,
      `rollout is also set at ${first?.source.file}:${first?.source.line}; one file of a manifest says how it rolls out`,
    ),
  );
  if (first === undefined) return { rollout: undefined, errors, checkProjects: () => [] };
  const { projectSources, ...rollout } = first;
  return {
    rollout,
    errors,
    checkProjects(managed, resolvedAtPlanTime) {
      if (resolvedAtPlanTime) return [];
      return rollout.waves.flatMap((wave, waveIndex) =>
        (wave.projects ?? []).flatMap((project, index) =>
          managed.has(project)
            ? []
            : [
                makeError(
                  rollout.source.file,
                  projectSources[waveIndex]?.[index] ?? wave.source,
                  `wave "${wave.name}" names project "${project}", which the manifest does not manage; name projects under \`projects:\` (or a project set)`,
                ),
              ],
        ),
      );
    },
  };
}
