// Which projects each wave of `rollout:` writes. A `percent` wave tops the waves so far up to that share,
// taking projects by a stable hash so the same plan gives the same waves in plan, apply and a resume.

import { createHash } from "node:crypto";
import type { RolloutSpec } from "../manifest/types.js";
import type { Plan, PlanRollout } from "./types.js";

export function rolloutOrder(projects: Iterable<string>): string[] {
  return [...new Set(projects)]
    .map((project) => ({ project, key: rolloutKey(project) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.project < b.project ? -1 : 1))
    .map(({ project }) => project);
}

// Fixed forever: changing it would move projects between waves. Salted, so it is not `--shard`'s order.
function rolloutKey(project: string): string {
  return createHash("sha256").update(`pcsync rollout\u0000${project}`).digest("hex");
}

export function projectsWritten(plan: Pick<Plan, "changes" | "reorders">): Set<string> {
  return new Set([...plan.changes, ...plan.reorders].map((item) => item.project));
}

/** `unassigned`: projects no wave takes, a plan error. */
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
