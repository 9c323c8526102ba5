// Two runs of apply at once (two CI jobs, a retry racing the original) both plan the same creates
// and both make them. After a family's creates, each run reads the family once and, wherever a
// concurrent run made the same record with a lower id, deletes its own copy: every run follows
// the same rule, so exactly one record per config survives, the one with the lowest id.

import type { ApiClient, PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import { ApiError, listAllConfigs, updateConfig } from "../api/index.js";
import type { FamilyName, WritableField } from "../families.js";
import { pluginDefaults } from "../plan/compare-fields.js";
import type { FieldValue, PlannedChange } from "../plan/types.js";
import type { ApplyOutcome } from "./apply-plan.js";

export interface DedupeInput {
  project: string;
  family: FamilyName;
  /** Ids the family listed when the plan was read: those existed before this run and any rival. */
  knownIds: ReadonlySet<number>;
  /** Ids this run created, in any family: never a rival's copy. */
  createdByRun: ReadonlySet<number>;
  /** The family's creates and updates as applied, with their outcomes (same index). */
  changes: readonly PlannedChange[];
  outcomes: readonly ApplyOutcome[];
}

/**
 * Returns the outcomes with each create's outcome revised: unchanged when this run's record is the
 * one that stays, else pointing at the surviving record once this run's copy is deleted. Reads the
 * family only when this run created something in it.
 */
export async function dedupeCreates(client: ApiClient, input: DedupeInput): Promise<ApplyOutcome[]> {
  const created = input.outcomes.flatMap((outcome, index) => {
    const change = input.changes[index];
    return change?.action === "create" && outcome.status === "done" && outcome.id !== null
      ? [{ index, change, id: outcome.id }]
      : [];
  });
  const outcomes = [...input.outcomes];
  if (created.length === 0) return outcomes;

  let records: PluginConfigRecord[];
  try {
    records = await listAllConfigs(client, input.project, input.family);
  } catch (error) {
    // Without the read, a concurrent run's duplicate would go unnoticed: say so rather than pass.
    for (const { index, id } of created) {
      const outcome = outcomes[index];
      if (!outcome) continue;
      outcomes[index] = {
        ...outcome,
        status: "failed",
        message: `created as id ${id}, but re-reading the family to check for a copy made by a concurrent run failed (${describeError(error)}); run plan to check`,
      };
    }
    return outcomes;
  }

  await Promise.all(
    created.map(async ({ index, change, id }) => {
      const outcome = outcomes[index];
      if (!outcome) return;
      const survivor = lowestRival(records, change, id, input);
      if (!survivor) return;
      outcomes[index] = await yieldToSurvivor(client, input, change, outcome, id, survivor);
    }),
  );
  return outcomes;
}

/** The record a concurrent run created for the same config with a lower id than ours, if any. */
function lowestRival(
  records: readonly PluginConfigRecord[],
  change: PlannedChange,
  ownId: number,
  input: DedupeInput,
): PluginConfigRecord | undefined {
  const plugin = change.fields.plugin?.to;
  const rivals = records.filter(
    (record) =>
      record.id < ownId &&
      record.name === change.name &&
      // Same plugin too: on servers whose plugin_configs list shows the frontend apps, a frontend
      // app of the same name is another config, not a copy.
      (typeof plugin !== "number" || record.plugin === plugin) &&
      !input.knownIds.has(record.id) &&
      !input.createdByRun.has(record.id),
  );
  return rivals.sort((a, b) => a.id - b.id)[0];
}

async function yieldToSurvivor(
  client: ApiClient,
  input: DedupeInput,
  change: PlannedChange,
  outcome: ApplyOutcome,
  ownId: number,
  survivor: PluginConfigRecord,
): Promise<ApplyOutcome> {
  const { project, family } = input;
  const race = `a concurrent run created this record too (id ${survivor.id}, which is kept as the lower id)`;
  try {
    const removed = await updateConfig(client, project, family, ownId, { deleted: true });
    if (removed.deleted !== true) throw new Error("the server answered but the record is not marked deleted");
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) {
      return {
        ...outcome,
        status: "failed",
        message: `${race}, but deleting this run's copy (id ${ownId}) failed: ${describeError(error)}; run apply again, or delete one of them`,
      };
    }
  }
  const differing = differingFields(change, survivor);
  if (differing.length > 0) {
    const body: Record<string, FieldValue> = {};
    for (const field of differing) body[field] = change.fields[field]?.to ?? null;
    try {
      const updated = await updateConfig(client, project, family, survivor.id, body as PluginConfigInput);
      const still = differingFields(change, updated);
      if (still.length > 0) throw new Error(`the server did not apply ${still.join(", ")}`);
    } catch (error) {
      return {
        ...outcome,
        id: survivor.id,
        status: "failed",
        message: `${race}; this run's copy (id ${ownId}) was deleted, but updating the survivor failed: ${describeError(error)}; run apply again`,
      };
    }
  }
  return {
    ...outcome,
    id: survivor.id,
    status: "done",
    message: `${race}; this run's copy (id ${ownId}) was deleted${differing.length > 0 ? ` and the survivor's ${differing.join(", ")} set` : ""}`,
  };
}

/** Fields of the create whose value the record does not have (a null name may show the plugin's). */
function differingFields(change: PlannedChange, record: PluginConfigRecord): WritableField[] {
  const differing: WritableField[] = [];
  for (const [field, fieldChange] of Object.entries(change.fields) as [
    WritableField,
    PlannedChange["fields"][WritableField],
  ][]) {
    if (!fieldChange) continue;
    const value = record[field] ?? null;
    if (value === fieldChange.to) continue;
    if (fieldChange.to === null && (field === "name" || field === "description")) {
      if (value === pluginDefaults(record)[field]) continue;
    }
    differing.push(field);
  }
  return differing;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
