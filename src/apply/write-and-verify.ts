// One create, update or delete, verified from the answer: a write accepted but not applied fails
// saying why. A claim of a record for its owner is checked against a rival claim (below).

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

export interface AppliedWrite {
  outcome: ApplyOutcome;
  certainty?: CreateCertainty | undefined;
}

function bodyOf(change: PlannedChange): PluginConfigInput {
  const body: Record<string, FieldValue> = {};
  for (const [field, fieldChange] of Object.entries(change.fields)) {
    if (fieldChange) body[field] = fieldChange.to;
  }
  return markedBody(change, body as PluginConfigInput);
}

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
  /** RecordWriter.create. */
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
    // Any other failure is definitive: createConfigDetailed settles every unknown POST.
    return { outcome: outcomeOf(change, "failed", describeError(error)) };
  }
}

export async function applyUpdate(writer: RecordWriter, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: update without an id");
  // Adopted, or taken over with --takeover.
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

/** By PATCH `deleted: true`, which unlists the record everywhere; posthog-2024's DELETE only disables it. */
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

// A claim (adopt or takeover) races other owners' claims with no conditional write: the last write
// wins. So it reads the record just before writing (another owner's mark: not sent) and after a
// window in which a rival's write would land (not its own mark: lost, naming the winner).

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

/** Undefined: go on and write. */
async function checkBeforeClaim(client: ApiClient, change: PlannedChange): Promise<ApplyOutcome | undefined> {
  if (change.id === null || change.mark === undefined) return undefined;
  const owner = await ownerNow(client, change, change.id);
  if (typeof owner === "object" && owner !== null)
    return outcomeOf(change, "failed", `could not read the record before claiming it: ${owner.error}`);
  if (owner === change.mark.from || owner === change.mark.owner) return undefined;
  return lost(change, owner, false);
}

/** The window is at least twice what the write took from the check, so a rival as slow still lands. */
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
