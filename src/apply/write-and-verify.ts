// One create, update or delete sent and verified from the service's answer: a write the server
// accepted but did not apply (a field that did not take) is a failure that says why.

import type { PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import { isApiError, isRequestError, isServiceError } from "../api/index.js";
import { describeStoredDescription } from "../description-view.js";
import { describeError } from "../errors.js";
import type { WritableField } from "../families.js";
import { neutraliseJson } from "../neutralise-server-text.js";
import { shownValue } from "../plan/compare-fields.js";
import type { FieldValue, PlannedChange } from "../plan/types.js";
import { checkBeforeClaim, confirmClaim, isClaim } from "./claim-record.js";
import type { FamilyReader } from "./create-config.js";
import type { CreateCertainty } from "./dedupe-creates.js";
import { notStartedOutcome, outcomeOf, outcomeOfError } from "./outcomes.js";
import type { RecordWriter } from "./record-writer.js";
import type { ApplyOutcome } from "./types.js";
import { markedBody, markProblem, mismatchedFields } from "./write-mark.js";

/** A create's outcome and, for the check after the family's creates, how it was settled. */
export interface AppliedWrite {
  outcome: ApplyOutcome;
  certainty?: CreateCertainty | undefined;
}

/** What a create or update sends: the fields it sets, its description with the owner mark if any. */
function bodyOf(change: PlannedChange): PluginConfigInput {
  const body: Record<string, FieldValue> = {};
  for (const [field, fieldChange] of Object.entries(change.fields)) {
    if (fieldChange) body[field] = fieldChange.to;
  }
  return markedBody(change, body as PluginConfigInput);
}

/** Why the server's answer to a write is not what was written; undefined when it is. */
function writeProblem(change: PlannedChange, record: PluginConfigRecord): string | undefined {
  const wrong = mismatchedFields(change, record);
  return wrong.length > 0 ? mismatchMessage(change, record, wrong) : markProblem(change, record);
}

function mismatchMessage(change: PlannedChange, record: PluginConfigRecord, wrong: WritableField[]): string {
  const details = wrong
    .map((field) =>
      // A description sent as it is (no mark on the change) is shown with its mark, if any.
      field === "description" && change.mark === undefined
        ? `description is ${describeStoredDescription(record.description)}, not ${describeStoredDescription(change.fields.description?.to)}`
        : `${field} is ${neutraliseJson(JSON.stringify(shownValue(field, record)))}, not ${neutraliseJson(JSON.stringify(change.fields[field]?.to))}`,
    )
    .join("; ");
  const hint = wrong.includes("plugin")
    ? `. This server cannot change the plugin of an existing config: to switch plugins, give the config a new name (and drop its "id:" if it has one) so that pcsync creates a new record, then delete or prune record ${record.id}`
    : "";
  return `the server accepted the write but did not apply it: ${details}${hint}`;
}

export async function applyCreate(
  writer: RecordWriter,
  change: PlannedChange,
  knownIds: ReadonlySet<number>,
  createdIds: Set<number>,
  reader: FamilyReader,
): Promise<AppliedWrite> {
  try {
    const created = await writer.create(change.project, change.family, bodyOf(change), {
      knownIds,
      reader,
    });
    const { record } = created;
    createdIds.add(record.id);
    const certainty = { uncertain: created.uncertain };
    const problem = writeProblem(change, record);
    if (problem !== undefined)
      return { outcome: outcomeOf({ ...change, id: record.id }, "failed", problem), certainty };
    return { outcome: outcomeOf({ ...change, id: record.id }, "done"), certainty };
  } catch (error) {
    if (isServiceError(error, "create_outcome_unknown")) {
      return {
        outcome: outcomeOf(change, "unknown", error.message),
        certainty: { uncertain: true, conclusiveAfter: error.facts.conclusiveAfter },
      };
    }
    if (isRequestError(error, "request_aborted")) {
      return { outcome: notStartedOutcome(change, error.message) };
    }
    // Any other failure is definitive: createConfig settles every POST whose outcome was unknown,
    // unreadable answers included.
    return { outcome: outcomeOf(change, "failed", describeError(error)) };
  }
}

export async function applyUpdate(writer: RecordWriter, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: update without an id");
  const claim = isClaim(change);
  const started = performance.now();
  if (claim) {
    const refused = await checkBeforeClaim(writer.client, change);
    if (refused !== undefined) return refused;
  }
  try {
    const record = await writer.update(
      "update",
      change.project,
      change.family,
      change.id,
      bodyOf(change),
      change.name,
    );
    const problem = writeProblem(change, record);
    if (problem !== undefined) return outcomeOf(change, "failed", problem);
    if (claim) return await confirmClaim(writer.client, change, performance.now() - started);
    return outcomeOf(change, "done");
  } catch (error) {
    return outcomeOfError(change, error);
  }
}

/**
 * Deletes by PATCH `deleted: true`: on every profile that removes the record from the family's
 * list, where DELETE on posthog-2024 servers only disables it.
 */
export async function applyDelete(writer: RecordWriter, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: delete without an id");
  try {
    const record = await writer.update(
      "delete",
      change.project,
      change.family,
      change.id,
      { deleted: true },
      change.name,
    );
    if (record.deleted !== true) {
      return outcomeOf(
        change,
        "failed",
        "the server answered the delete but the record is not marked deleted",
      );
    }
    return outcomeOf(change, "done");
  } catch (error) {
    if (isApiError(error, 404)) {
      return outcomeOf(change, "done", "already gone");
    }
    return outcomeOfError(change, error);
  }
}
