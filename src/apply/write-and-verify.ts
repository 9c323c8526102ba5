// One create, update or delete sent and verified from the service's answer: a write the server
// accepted but did not apply (a field that did not take) is a failure that says why. An update that
// claims a record for its owner is checked against a rival claim before and after (below).

import type { ApiClient, PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import { getConfig, isApiError, isRequestError, isServiceError } from "../api/index.js";
import { describeStoredDescription } from "../description-view.js";
import { describeError } from "../errors.js";
import type { WritableField } from "../families.js";
import { neutraliseJson } from "../neutralise-server-text.js";
import { readMark } from "../owner-mark.js";
import { shownValue } from "../plan/compare-fields.js";
import type { FieldValue, PlannedChange } from "../plan/types.js";
import type { CreateConfigOptions } from "./create-config.js";
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
  createdIds: Set<number>,
  lists: Required<Pick<CreateConfigOptions, "knownIds" | "reader">> & Pick<CreateConfigOptions, "elsewhere">,
  /** The records of the config the lists held before the create (RecordWriter.create). */
  kept: readonly number[],
): Promise<AppliedWrite> {
  try {
    const created = await writer.create(change.project, change.family, bodyOf(change), lists, kept);
    const { record } = created;
    createdIds.add(record.id);
    const certainty = { uncertain: created.uncertain };
    let problem = writeProblem(change, record);
    // Adopted from a re-read of the list (its answer lost): posthog-2024's lists show the plugin's
    // own text for an empty name or description, and not which plugin's it is. The record says.
    if (problem !== undefined && created.adopted) {
      const shown = await getConfig(writer.client, change.project, change.family, record.id).catch(
        () => undefined,
      );
      if (shown !== undefined) problem = writeProblem(change, shown);
    }
    const status = problem === undefined ? "done" : "failed";
    return { outcome: outcomeOf({ ...change, id: record.id }, status, problem), certainty };
  } catch (error) {
    if (isServiceError(error, "create_outcome_unknown")) {
      return {
        outcome: outcomeOf(change, "unknown", error.message),
        certainty: { uncertain: true, conclusiveAfter: error.facts.conclusiveAfter },
      };
    }
    if (isRequestError(error, "request_aborted"))
      return { outcome: notStartedOutcome(change, error.message) };
    // Any other failure is definitive: createConfigDetailed settles every POST whose outcome was unknown,
    // unreadable answers included.
    return { outcome: outcomeOf(change, "failed", describeError(error)) };
  }
}

export async function applyUpdate(writer: RecordWriter, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: update without an id");
  // A change that hands the record to its owner (adopted, or taken over with --takeover).
  const claim = change.mark?.from !== undefined;
  const started = performance.now();
  if (claim) {
    const refused = await checkBeforeClaim(writer.client, change);
    if (refused !== undefined) return refused;
  }
  const { project, family, id, name } = change;
  try {
    const record = await writer.update("update", project, family, id, bodyOf(change), name);
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
  const { project, family, id, name } = change;
  try {
    const record = await writer.update("delete", project, family, id, { deleted: true }, name);
    if (record.deleted === true) return outcomeOf(change, "done");
    return outcomeOf(change, "failed", "the server answered the delete but the record is not marked deleted");
  } catch (error) {
    if (isApiError(error, 404)) return outcomeOf(change, "done", "already gone");
    return outcomeOfError(change, error);
  }
}

// A write that adopts a record (no mark) or takes it over (another owner's mark) races another
// owner claiming it at once, and the service has no conditional write: the last write wins. So a
// claim reads the record just before it writes (another owner's mark there now: not sent), and
// again after a window in which a rival's write would land (not its own mark: lost, naming the
// winner). Of two owners claiming one record at once, the one whose write the record shows wins.

/** At least this long between a claim's write and its check: a rival's write sent at once lands. */
const CLAIM_WINDOW_MS = 1000;

function lost(change: PlannedChange, winner: string | null, written: boolean): ApplyOutcome {
  const what = written
    ? winner === null
      ? "its mark was replaced by another write to the description at the same time (the record carries no owner mark now)"
      : `owner "${winner}" claimed it at the same time, and its mark won (its write came last)`
    : `owner "${winner}" claimed it since the plan was made; it was not written`;
  return { ...outcomeOf(change, "failed", what), ownerLost: { winner } };
}

/**
 * Before the write: the record's owner now. A claim of a record another owner holds since the
 * plan is lost before it is sent (undefined: go on and write).
 */
async function checkBeforeClaim(client: ApiClient, change: PlannedChange): Promise<ApplyOutcome | undefined> {
  if (change.id === null || change.mark === undefined) return undefined;
  const owner = await ownerNow(client, change, change.id);
  if (typeof owner === "object" && owner !== null)
    return outcomeOf(change, "failed", `could not read the record before claiming it: ${owner.error}`);
  if (owner === change.mark.from || owner === change.mark.owner) return undefined;
  return lost(change, owner, false);
}

/**
 * After the write: waits out the window (at least as long as the write took from the check before
 * it, so a rival as slow still lands), reads the record, and says whether this owner's mark won.
 */
async function confirmClaim(client: ApiClient, change: PlannedChange, tookMs: number): Promise<ApplyOutcome> {
  if (change.id === null || change.mark === undefined) return outcomeOf(change, "done");
  await new Promise((done) => setTimeout(done, Math.max(CLAIM_WINDOW_MS, 2 * tookMs)));
  const owner = await ownerNow(client, change, change.id);
  if (typeof owner === "object" && owner !== null) {
    return outcomeOf(
      change,
      "unknown",
      `written, but the record could not be read again to confirm that this owner's mark won: ${owner.error}; run \`pcsync plan\` to see`,
    );
  }
  return owner === change.mark.owner ? outcomeOf(change, "done") : lost(change, owner, true);
}

/** The owner whose mark the record carries now (null: none), or why it could not be read. */
async function ownerNow(
  client: ApiClient,
  change: PlannedChange,
  id: number,
): Promise<string | null | { error: string }> {
  try {
    return readMark((await getConfig(client, change.project, change.family, id)).description).owner;
  } catch (error) {
    return { error: describeError(error) };
  }
}
