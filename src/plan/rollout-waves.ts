// Which projects each wave of `rollout:` writes: pure, from the spec and the plan's projects. A
// wave of named projects takes those the plan changes; a wave of `percent` tops the waves so far up
// to that share of the plan's projects, taking the next by a stable hash of the project id, so that
// the same plan gives the same waves in `plan`, in `apply` and in a resumed apply.

import { createHash } from "node:crypto";
import type { RolloutSpec } from "../manifest/types.js";
import type { Plan, PlanRollout } from "./types.js";

/** The projects the plan writes, in the order a rollout's `percent` waves take them. */
export function rolloutOrder(projects: Iterable<string>): string[] {
  return [...new Set(projects)]
    .map((project) => ({ project, key: rolloutKey(project) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.project < b.project ? -1 : 1))
    .map(({ project }) => project);
}

/**
 * The hash that places a project in the `percent` order: fixed forever, since changing it would
 * move projects between waves. Salted, so that it is not the order `--shard` splits by.
 */
function rolloutKey(project: string): string {
  return createHash("sha256").update(`pcsync rollout\u0000${project}`).digest("hex");
}

/** The projects a plan writes: those with a change or a reorder. */
export function projectsWritten(plan: Pick<Plan, "changes" | "reorders">): Set<string> {
  return new Set([...plan.changes, ...plan.reorders].map((item) => item.project));
}

/**
 * The waves of `spec` over the projects the plan writes, and the projects no wave takes (a plan
 * error: every project the plan changes is in exactly one wave).
 */
export function assignWaves(
  spec: RolloutSpec,
  planned: ReadonlySet<string>,
): { rollout: PlanRollout; unassigned: string[] } {
  const order = rolloutOrder(planned);
  const assigned = new Set<string>();
  const waves = spec.waves.map((wave) => {
    const projects: string[] = [];
    const take = (project: string): void => {
      if (assigned.has(project) || !planned.has(project)) return;
      assigned.add(project);
      projects.push(project);
    };
    if (wave.projects !== undefined) for (const project of wave.projects) take(project);
    if (wave.percent !== undefined) {
      const target = Math.min(order.length, Math.ceil((wave.percent / 100) * order.length - 1e-9));
      for (const project of order) {
        if (assigned.size >= target) break;
        take(project);
      }
    }
    return { name: wave.name, projects };
  });
  return {
    rollout: {
      waves,
      bakeSeconds: spec.bakeMs / 1000,
      health: {
        ...(spec.health.logs === undefined ? {} : { logs: { ...spec.health.logs } }),
        ...(spec.health.prometheus === undefined ? {} : { prometheus: { ...spec.health.prometheus } }),
      },
      failureBudget: spec.failureBudget,
      onFailure: spec.onFailure,
    },
    unassigned: order.filter((project) => !assigned.has(project)),
  };
}
