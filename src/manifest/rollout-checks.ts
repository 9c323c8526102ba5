// `rollout:` of one manifest file, read into its spec with every default filled in, and the checks
// the schema cannot express: unique wave names, a project in one wave only, shares that never
// shrink. The cross-file checks (one `rollout:` per run, waves naming projects the manifest
// manages) are merge.ts's.

import { parseDuration } from "../duration.js";
import type { Position } from "./diagnostics.js";
import { asRecord, type LocationIndex } from "./plain-manifest.js";
import type { LogHealthSpec } from "./types.js";
import type { YamlProblem } from "./yaml-nodes.js";

/** The defaults of `rollout:` (cli-contract.md, "Progressive rollout"). */
export const ROLLOUT_DEFAULTS = {
  bakeMs: 600_000,
  maxErrorRatio: 0.05,
  minEntries: 20,
  allowUnknown: false,
  failureBudget: 0,
  onFailure: "rollback",
} as const;

/** A wave as one file writes it, with the places merge.ts turns into file:line. */
export interface RolloutWaveFact {
  name: string;
  projects?: string[];
  /** Where each named project is written, in `projects` order. */
  projectPositions?: Position[];
  percent?: number;
  position: Position;
}

export interface RolloutFact {
  waves: RolloutWaveFact[];
  bakeMs: number;
  health: { logs: LogHealthSpec };
  failureBudget: number;
  onFailure: "rollback" | "halt";
  position: Position;
}

/**
 * Reads `rollout:` defensively (the schema reports wrong types; this reads what it can) and adds
 * the problems only it can see to `errors` and `warnings`.
 */
export function readRollout(
  value: unknown,
  locations: LocationIndex,
  errors: YamlProblem[],
  warnings: YamlProblem[],
): RolloutFact | undefined {
  const rollout = asRecord(value);
  if (rollout === undefined) return undefined;
  const at = (path: readonly (string | number)[]): Position =>
    locations.lookup(["rollout", ...path])?.value ??
    locations.lookup(["rollout"])?.key ?? { line: 1, col: 1 };

  const waves: RolloutWaveFact[] = [];
  const names = new Map<string, Position>();
  const projectWaves = new Map<string, string>();
  let largestPercent: { percent: number; name: string } | undefined;
  let complete: string | undefined;
  (Array.isArray(rollout.waves) ? rollout.waves : []).forEach((waveValue, index) => {
    const wave = asRecord(waveValue);
    if (wave === undefined || typeof wave.name !== "string") return;
    const name = wave.name;
    const position = at(["waves", index, "name"]);
    const earlier = names.get(name);
    if (earlier !== undefined) {
      errors.push({
        position,
        message: `wave "${name}" is also named at line ${earlier.line}; give each wave its own name`,
      });
    }
    names.set(name, position);
    if (complete !== undefined) {
      warnings.push({
        position,
        message: `wave "${name}" comes after wave "${complete}", which already reaches 100% of the plan's projects: it will never write anything`,
      });
    }
    const fact: RolloutWaveFact = { name, position };
    const hasProjects = Array.isArray(wave.projects);
    if (hasProjects === (typeof wave.percent === "number")) {
      errors.push({
        position,
        message: hasProjects
          ? `wave "${name}" gives both projects and percent; a wave is either named projects or a share of the plan's projects`
          : `wave "${name}" says neither which projects nor what share; give it \`projects: [...]\` or \`percent: N\``,
      });
    }
    if (Array.isArray(wave.projects)) {
      fact.projects = [];
      fact.projectPositions = [];
      wave.projects.forEach((project, projectIndex) => {
        if (typeof project !== "string") return;
        const projectPosition = at(["waves", index, "projects", projectIndex]);
        const other = projectWaves.get(project);
        if (other !== undefined) {
          errors.push({
            position: projectPosition,
            message:
              other === name
                ? `project "${project}" is named twice in wave "${name}"`
                : `project "${project}" is already in wave "${other}"; a project belongs to one wave`,
          });
          return;
        }
        projectWaves.set(project, name);
        fact.projects?.push(project);
        fact.projectPositions?.push(projectPosition);
      });
    }
    if (typeof wave.percent === "number") {
      fact.percent = wave.percent;
      if (largestPercent !== undefined && wave.percent < largestPercent.percent) {
        errors.push({
          position: at(["waves", index, "percent"]),
          message: `wave "${name}" says percent: ${wave.percent}, less than the ${largestPercent.percent} wave "${largestPercent.name}" already reaches; a wave's percent counts the earlier waves, so it never shrinks`,
        });
      } else largestPercent = { percent: wave.percent, name };
      if (wave.percent >= 100) complete ??= name;
    }
    waves.push(fact);
  });

  // A bake that is not a duration is the schema's to report (its pattern); the default stands in.
  const bakeMs =
    (typeof rollout.bake === "string" ? parseDuration(rollout.bake) : undefined) ?? ROLLOUT_DEFAULTS.bakeMs;
  const logs = asRecord(asRecord(rollout.health)?.logs);
  const health: { logs: LogHealthSpec } = {
    logs: {
      maxErrorRatio:
        typeof logs?.max_error_ratio === "number" ? logs.max_error_ratio : ROLLOUT_DEFAULTS.maxErrorRatio,
      minEntries: typeof logs?.min_entries === "number" ? logs.min_entries : ROLLOUT_DEFAULTS.minEntries,
      allowUnknown:
        typeof logs?.allow_unknown === "boolean" ? logs.allow_unknown : ROLLOUT_DEFAULTS.allowUnknown,
    },
  };
  return {
    waves,
    bakeMs,
    health,
    failureBudget:
      typeof rollout.failure_budget === "number" ? rollout.failure_budget : ROLLOUT_DEFAULTS.failureBudget,
    onFailure: rollout.on_failure === "halt" ? "halt" : ROLLOUT_DEFAULTS.onFailure,
    position: locations.lookup(["rollout"])?.key ?? { line: 1, col: 1 },
  };
}
