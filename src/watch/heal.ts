// Heal mode: what `watch` applies of a cycle's plan. A family a guard refuses is not written at all;
// the others go through the one apply path, with every check apply makes.

import type { ApiClient } from "../api/index.js";
import type { CreateRule } from "../apply/proof-window.js";
import type { ApplyReport } from "../apply/types.js";
import { type FamilyName, type FamilyRef, familyKey, ofFamily } from "../families.js";
import type { RunInput } from "../files/output-target.js";
import { groupBy } from "../group-by.js";
import { defaultJournalPath } from "../journal/apply-journal.js";
import { pruneHealJournals, removeIfHealWroteNothing } from "../journal/prune-heal-journals.js";
import type { DesiredFamily, DriftMode } from "../manifest/types.js";
import type { PlanDiagnostic, ProjectPlan } from "../plan/compute-plan.js";
import { selectFamilies } from "../plan/select-families.js";
import type { CurrentState, Plan, PlannedChange } from "../plan/types.js";
import type { SecretRegistry } from "../redact.js";
import { describeGuard } from "../render/guard-message.js";
import { applyWithJournal } from "../run/apply-with-journal.js";
import { driftCount, type FamilyFinding } from "./cycle-log.js";
import type { DriftCounts } from "./watch-metrics.js";

/** Each watched family's mode: its manifest's `drift:` if it says one, else `--mode`. */
export function modesOf(
  desired: { readonly families: readonly DesiredFamily[] },
  fallback: DriftMode,
): Map<string, DriftMode> {
  return new Map(
    desired.families.map((family) => [familyKey(family.project, family.family), family.drift ?? fallback]),
  );
}

export function findingOf(
  plan: Pick<Plan, "changes" | "reorders">,
  project: string,
  family: FamilyName,
): FamilyFinding {
  const changes = plan.changes.filter(ofFamily(project, family));
  const reorder = plan.reorders.find(ofFamily(project, family));
  return { project, family, changes, reorder };
}

export interface HealResult {
  findings: FamilyFinding[];
  report: ApplyReport | undefined;
  refused: number;
  journal: string | undefined;
}

/** A planned change and its outcome meet here: a create by its name (its outcome has the new id), the rest by id. */
function changeKey(item: { action: string; id: number | null; name: string | null }): string {
  return item.action === "create" || item.action === "reorder"
    ? `${item.action}\u0000${item.name}`
    : `${item.action}\u0000${item.id}`;
}

export async function healPlan(
  client: ApiClient,
  plan: Plan,
  current: CurrentState,
  modes: ReadonlyMap<string, DriftMode>,
  options: {
    concurrency: number;
    create?: CreateRule | undefined;
    signal?: AbortSignal | undefined;
    /** Never over one of `inputs`; the ended journals beyond the newest `keep` are removed (0: none is). */
    journal: { cwd: string; inputs: readonly RunInput[]; secrets: SecretRegistry; keep: number };
    onNote?: ((line: string) => void) | undefined;
    /** Families refused whatever their mode: configs that match another owner's records. */
    refused?: readonly PlanDiagnostic[] | undefined;
  },
): Promise<HealResult> {
  const byFamily = (item: { project: string; family: string }) => familyKey(item.project, item.family);
  const guardsByFamily = groupBy(plan.guards, byFamily);
  // An owner conflict is refused in warn mode too, as `plan` refuses it (exit 3).
  const ownerRefusals = groupBy(options.refused ?? [], byFamily);
  const refusalOf = (key: string): string[] | undefined => {
    const owner = (ownerRefusals.get(key) ?? []).map((item) => `${item.source}: ${item.message}`);
    const guards = modes.get(key) === "heal" ? guardsByFamily.get(key) : undefined;
    const refusal = [...owner, ...(guards ?? []).map((guard) => describeGuard(guard))];
    return refusal.length === 0 ? undefined : refusal;
  };
  const healing = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    return modes.get(key) === "heal" && !guardsByFamily.has(key) && !ownerRefusals.has(key);
  };
  const healPart = selectFamilies(plan, healing);
  // Through the journaled apply that `apply` uses: a heal that writes can be rolled back.
  const healed =
    healPart.changes.length + healPart.reorders.length > 0
      ? await applyWithJournal(client, healPart, current, {
          journalPath: defaultJournalPath(new Date(), "heal"),
          start: { command: "heal", planFile: null },
          files: options.journal,
          apply: { concurrency: options.concurrency, signal: options.signal, create: options.create },
          onNote: options.onNote,
        })
      : undefined;
  // A heal that changed nothing (its writes failed, or it took back what it made) leaves no journal.
  const journal =
    healed?.journal === undefined || (await removeIfHealWroteNothing(healed.journal, options.journal.cwd))
      ? undefined
      : healed.journal;
  if (journal !== undefined) await pruneHealJournals(options.journal.cwd, options.journal.keep);
  const report = healed?.report;
  const done = groupBy(
    (report?.outcomes ?? []).filter((outcome) => outcome.status === "done"),
    byFamily,
  );

  const findings = plan.families.map((report): FamilyFinding => {
    const key = byFamily(report);
    const finding = findingOf(plan, report.project, report.family);
    const refusal = refusalOf(key);
    if (refusal !== undefined) return { ...finding, refused: refusal };
    const applied = done.get(key);
    if (applied === undefined) return finding;
    // What heal did of the family's changes, and what is left (failed, skipped, outcome unknown).
    const doneKeys = new Set(applied.map(changeKey));
    const isDone = (change: PlannedChange) => doneKeys.has(changeKey(change));
    const { changes, reorder } = finding;
    const reordered =
      reorder !== undefined && doneKeys.has(changeKey({ action: "reorder", id: null, name: null }));
    return {
      ...finding,
      changes: changes.filter((change) => !isDone(change)),
      reorder: reordered ? undefined : reorder,
      healed: {
        changes: changes.filter(isDone),
        reorder: reordered ? reorder : undefined,
        ...(journal === undefined ? {} : { journal }),
      },
    };
  });
  const refused = findings.filter((finding) => finding.refused !== undefined).length;
  return { findings, report, refused, journal };
}

/**
 * A project's drift as soon as its plan is known, so that at 1,000 projects a gauge need not wait for
 * the whole read. Only counts the cycle's end reports unchanged: a drifting family in heal is left out
 * (what heal leaves is known only after it), and a project with errors gives none (the cycle fails).
 */
export function earlyDriftOf(
  part: Readonly<ProjectPlan>,
  desired: readonly DesiredFamily[],
  fallback: DriftMode,
): DriftCounts {
  const counts = new Map<string, FamilyRef & { changes: number }>();
  if (part.errors.some((error) => error.refused !== true)) return counts;
  const modes = modesOf({ families: desired }, fallback);
  for (const { project, family } of part.families) {
    const key = familyKey(project, family);
    const changes = driftCount(findingOf(part, project, family));
    if ((modes.get(key) ?? fallback) === "heal" && changes > 0) continue;
    counts.set(key, { project, family, changes });
  }
  return counts;
}
