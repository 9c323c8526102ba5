// What apply's flags do to a manifest's `rollout:`, or without one: --shard would run this shard's
// waves beside the other shards' (refused where it writes; a plan of a shard is a drift check like
// any), --project can leave a named wave's projects out so later waves go without them first
// (warned), --no-journal would leave nothing to resume the rollout from or roll its waves back with
// (refused); and without `rollout:`, the flags that report a rollout's waves do nothing (warned).

import { InputError } from "../input-error.js";
import { formatSource } from "../manifest/diagnostics.js";
import type { RolloutSpec } from "../manifest/types.js";
import type { PlanScope } from "../run/plan-manifest.js";

export interface RolloutRunFlags {
  scope: PlanScope;
  webhook?: readonly string[] | undefined;
  webhookSecretFile?: string | undefined;
  metricsFile?: string | undefined;
  /** The run writes (apply), rather than only showing the plan (apply --dry-run). */
  writes: boolean;
  /** --no-journal was given. */
  noJournal: boolean;
}

/**
 * Throws a usage error for a rollout the flags would break; calls `warn` for one they thin out, and
 * for --webhook, --webhook-secret-file and --metrics-file without a rollout (or with --plan, which
 * never rolls out): a warning, not a refusal, since one CI command line may serve manifests with
 * and without a rollout.
 */
export function checkRolloutFlags(
  rollout: RolloutSpec | undefined,
  run: RolloutRunFlags,
  warn: (line: string) => void,
): void {
  if (rollout === undefined) {
    const given = [
      ...((run.webhook ?? []).length > 0 ? ["--webhook"] : []),
      ...(run.webhookSecretFile === undefined ? [] : ["--webhook-secret-file"]),
      ...(run.metricsFile === undefined ? [] : ["--metrics-file"]),
    ];
    if (given.length > 0)
      warn(
        `warning: ${given.join(", ")} ${given.length === 1 ? "reports" : "report"} a rollout's waves, and this apply has no \`rollout:\` in its manifest: ignored`,
      );
    return;
  }
  const where = `the manifest's rollout: (${formatSource(rollout.source)})`;
  // Planning one shard of a rollout is a drift check like any: only writing it is refused.
  if (run.writes && run.scope.shard !== undefined)
    throw new InputError(
      "usage",
      `--shard ${run.scope.shard} cannot go with ${where}: a rollout's waves go one after another across all its projects, and --shard runs beside the other shards, so one shard's canary would not go before the others' writes; apply the rollout in one run, without --shard`,
    );
  if (run.writes && run.noJournal)
    throw new InputError(
      "usage",
      `--no-journal cannot go with ${where}: a rollout keeps its progress and the undo of each wave in journals, to resume after an interruption and to roll back on a failed health check`,
    );
  // A plan shows the waves as they fall ("canary: no project"); the warning is for apply, and its
  // dry run says it too: with --auto-approve, the apply's own warning comes after the choice.
  const only = run.scope.project;
  if (only === undefined) return;
  for (const [index, wave] of rollout.waves.entries()) {
    const later = rollout.waves.slice(index + 1).map((next, at) => `${index + at + 2} "${next.name}"`);
    const left = (wave.projects ?? []).filter((project) => !only.includes(project));
    if (left.length === 0 || later.length === 0) continue;
    warn(
      `warning: rollout wave ${index + 1} "${wave.name}" names project ${left.join(", ")}, which --project leaves out of this run, so ${later.length === 1 ? "wave" : "waves"} ${later.join(", ")} ${later.length === 1 ? "is" : "are"} written before ${left.length === 1 ? "it" : "them"}`,
    );
  }
}
