// The check after a family's creates: one read, and of a config's records made since the plan (same
// name and plugin) all but the lowest id are deleted. Two concurrent applies both make the record, a
// lost POST may land late; every run follows this rule, so exactly one record per config survives.
// Known limit: a create settled by finding its record may have found a concurrent run's while its own
// POST was on its way; landing after both checks, it stays a copy (a later plan names both ids):
// closing that would mean waiting out the settle window before every check after an adopted create.

import type { ApiClient, PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import { getConfig, isApiError, listAllConfigs } from "../api/index.js";
import { describeError } from "../errors.js";
import type { FamilyName } from "../families.js";
import { familiesListing } from "../family-lists.js";
import { readMark } from "../owner-mark.js";
import type { FieldValue, PlannedChange } from "../plan/types.js";
import { sameName } from "../record-name.js";
import { showsText } from "../trim-as-service.js";
import { type FamilyListing, FamilyReader } from "./create-config.js";
import { RecordWriter } from "./record-writer.js";
import type { ApplyOutcome } from "./types.js";
import { markDescription, mismatchedFields, sameOwner } from "./write-mark.js";

/** A create an earlier run of this apply sent (the run it resumes, or one killed here lately). */
export interface EarlierCreate {
  project: string;
  family: FamilyName;
  name: string | null;
  plugin: number | null;
  /** The record its answer named; undefined when it went unanswered (its record may exist). */
  id?: number | undefined;
  /** Records of its config that were there before it was sent (WriteIntent.kept): not its. */
  kept?: readonly number[] | undefined;
}

export interface CreateCertainty {
  /**
   * Some POST had an unknown outcome: a late copy may land, which no other run would delete, so this
   * run deletes every copy above the lowest id, not only its own.
   */
  uncertain: boolean;
  /** For a create whose outcome is still unknown: a read started at or after this time proves absence. */
  conclusiveAfter?: number | undefined;
}

export interface DedupeInput {
  project: string;
  family: FamilyName;
  /** Listed when the plan was read: before this run and any rival. */
  knownIds: ReadonlySet<number>;
  /** Created or adopted by this run, in any family (adopted here: added): never another config's copy. */
  createdByRun: Set<number>;
  earlierCreates?: readonly EarlierCreate[] | undefined;
  /** The family's creates and updates, with their outcomes at the same index. */
  changes: readonly PlannedChange[];
  outcomes: readonly ApplyOutcome[];
  /** Same index; missing means certain (answered at the first POST). */
  certainties?: readonly (CreateCertainty | undefined)[] | undefined;
  /** Shared with the creates' own re-reads; a new read is made either way. */
  reader?: FamilyReader | undefined;
  /** Once aborted, the check does not start: its deletes would be new writes. */
  signal?: AbortSignal | undefined;
  /** The run's (journaled) writer; else writes go directly. */
  writer?: RecordWriter | undefined;
}

interface Target {
  index: number;
  change: PlannedChange;
  outcome: ApplyOutcome;
  /** Null when the create's outcome is unknown. */
  ownId: number | null;
  certainty: CreateCertainty | undefined;
}

/**
 * The outcomes with each create's revised: pointing at the survivor once copies are deleted; an
 * unknown one done when its record is found, failed when the read proves it absent. Reads the family
 * only when this run created (or may have) something in it.
 */
export async function dedupeCreates(client: ApiClient, input: DedupeInput): Promise<ApplyOutcome[]> {
  const targets = input.outcomes.flatMap((outcome, index): Target[] => {
    const change = input.changes[index];
    if (change?.action !== "create") return [];
    const certainty = input.certainties?.[index];
    if (outcome.status === "done" && outcome.id !== null)
      return [{ index, change, outcome, ownId: outcome.id, certainty }];
    if (outcome.status === "unknown") return [{ index, change, outcome, ownId: null, certainty }];
    return [];
  });
  const outcomes = [...input.outcomes];
  if (targets.length === 0) return outcomes;

  const notChecked = (why: string, interrupted = false) => {
    // Without the read, a copy would go unnoticed: the create stands, and the report says so.
    for (const { index, outcome, ownId } of targets) {
      if (ownId === null) continue;
      outcomes[index] = {
        ...outcome,
        unchecked: true,
        ...(interrupted ? { checkInterrupted: true as const } : {}),
        message: `created as id ${ownId}, but the check for a copy of it (a concurrent run's, or a late commit of a POST whose answer was lost) could not run: ${why}; run \`pcsync plan\` to see whether there is one`,
      };
    }
    return outcomes;
  };
  if (input.signal?.aborted) return notChecked("the run was interrupted", true);

  let read: FamilyListing;
  try {
    const reader = input.reader ?? new FamilyReader(client, input.project, input.family);
    read = await reader.read(client.now());
  } catch (error) {
    // A signal that came during the read is the interruption, not a failure of the service.
    if (input.signal?.aborted) return notChecked("the run was interrupted", true);
    return notChecked(`re-reading the family failed (${describeError(error)})`);
  }

  await Promise.all(
    targets.map(async (target) => {
      outcomes[target.index] = await checkCopies(client, input, target, read);
    }),
  );
  return outcomes;
}

async function checkCopies(
  client: ApiClient,
  input: DedupeInput,
  target: Target,
  read: FamilyListing,
): Promise<ApplyOutcome> {
  const { change, outcome, ownId, certainty } = target;
  const copies = copiesOf(read.records, change, input, ownId).sort((a, b) => a.id - b.id);
  const lowest = copies[0];

  if (ownId === null) {
    if (!lowest) {
      const conclusiveAfter = certainty?.conclusiveAfter;
      if (conclusiveAfter !== undefined && read.startedAt >= conclusiveAfter) {
        return {
          ...outcome,
          status: "failed",
          message: `${outcome.message ?? "the POST got no answer"}. A later read of the family, after the settle window, does not show the record: it was not created; run apply again`,
        };
      }
      return outcome;
    }
    input.createdByRun.add(lowest.id);
    const others = copies.slice(1).map((record) => record.id);
    return await keepSurvivor(client, input, change, outcome, lowest, others, {
      story: `its POST got no answer, and the check after the family's creates found the record (id ${lowest.id})`,
      deleted: others.length > 0 ? `the later copies (ids ${others.join(", ")}) were deleted` : "",
    });
  }

  if (!read.records.some((record) => record.id === ownId)) {
    const unlisted = await unlistedCreate(client, input, change, outcome, ownId);
    if (unlisted !== undefined) return unlisted;
  }

  const uncertain = certainty?.uncertain === true;
  // Another owner made this config's record at the same time: one record of a name stays, the
  // lowest id, as between two runs of one owner. When it is theirs, this run's copy goes and the
  // create is lost to them (their run, by the same rule, keeps theirs).
  const rival = rivalCreates(read.records, change, input)[0];
  if (rival !== undefined && rival.id < (lowest?.id ?? ownId)) {
    const mine = uncertain ? copies.map((record) => record.id) : [ownId];
    return await yieldToRival(client, input, outcome, rival, mine);
  }
  if (lowest === undefined || lowest.id >= ownId) {
    // This run's record stays. Copies above it are other runs' (they delete their own) unless a POST
    // of this create may have landed late: that copy is nobody else's to delete.
    const later = uncertain ? copies.filter((record) => record.id > ownId).map((record) => record.id) : [];
    if (later.length === 0) return outcome;
    const own = read.records.find((record) => record.id === ownId);
    if (!own) return outcome;
    return await keepSurvivor(client, input, change, outcome, own, later, {
      story: `created as id ${ownId}, and later copies of it were found (ids ${later.join(", ")}: a late commit of a POST whose answer was lost, or a concurrent run's)`,
      deleted: "they were deleted, as the lowest id is kept",
    });
  }

  // A lower id exists: this run's copy goes, and so do the others above the survivor if a late
  // copy of ours may be among them.
  const others = uncertain
    ? copies.filter((record) => record.id !== lowest.id && record.id !== ownId).map((record) => record.id)
    : [];
  const story = uncertain
    ? `another record of this config has a lower id (id ${lowest.id}, which is kept: a concurrent run's, or a late commit of a POST of this run whose answer was lost)`
    : `a concurrent run created this record too (id ${lowest.id}, which is kept as the lower id)`;
  return await keepSurvivor(client, input, change, outcome, lowest, [ownId, ...others], {
    story,
    deleted: `this run's copy (id ${ownId})${others.length > 0 ? ` and the later copies (ids ${others.join(", ")}) were` : " was"} deleted`,
  });
}

/**
 * An answered create its family's list does not show: the real service keeps a frontend-apps config
 * whose plugin is not a frontend app under plugin_configs only. Left there, no plan would see it and
 * every heal would make one more: it is deleted again through that list, and the create fails saying
 * why. Undefined when no such list shows it (deleted since): the create stands.
 */
async function unlistedCreate(
  client: ApiClient,
  input: DedupeInput,
  change: PlannedChange,
  outcome: ApplyOutcome,
  ownId: number,
): Promise<ApplyOutcome | undefined> {
  const { project, family } = input;
  const listings = familiesListing(family);
  if (listings.length === 0) return undefined;
  // A paged list read can miss a record (another client deleting one behind it and creating one
  // ahead of it between pages): the record's own family is asked first, and one it has stays.
  try {
    const own = await getConfig(client, project, family, ownId);
    if (own.deleted !== true) return undefined;
  } catch (error) {
    if (!isApiError(error, 404)) return undefined;
  }
  for (const listing of listings) {
    let record: PluginConfigRecord;
    try {
      record = await getConfig(client, project, listing, ownId);
    } catch (error) {
      if (isApiError(error, 404)) continue;
      return {
        ...outcome,
        status: "failed",
        message: `created as id ${ownId}, which the service does not list among the ${family} of project ${project}; reading it through ${listing} failed: ${describeError(error)}; run \`pcsync plan\` and see where it went`,
      };
    }
    if (record.deleted === true) continue;
    const plugin = change.fields.plugin?.to;
    const why = `the service made it but lists it among the ${listing} of project ${project}, not the ${family}: ${typeof plugin === "number" ? `plugin ${plugin}` : "its plugin"} is not a frontend app (only a frontend app's config is one of the ${family})`;
    // A run of this apply killed before it took its own record back (and now resumed) left one
    // there: this run's records of the config in that list go too.
    const earlier = await earlierRecordsOfRun(client, input, change, listing, ownId);
    const failure = await deleteCopies(client, { ...input, family: listing }, [ownId, ...earlier]);
    const also =
      earlier.length > 0
        ? ` (with record ${earlier.join(", ")}, made by an earlier run of this apply that was cut short)`
        : "";
    return {
      ...outcome,
      status: "failed",
      message:
        failure === undefined
          ? `${why}; it was deleted again${also}, so that no copy of it is left behind: manage this config under ${listing}`
          : `${why}; deleting it again failed: ${describeError(failure.error)}; delete record ${[ownId, ...earlier].join(", ")} under ${listing}, and manage this config there`,
    };
  }
  return undefined;
}

/**
 * The config's records in `listing` (but `ownId`) that earlier runs' creates made, or may have made
 * unanswered (never one there before they were sent). None when the list cannot be read.
 */
async function earlierRecordsOfRun(
  client: ApiClient,
  input: DedupeInput,
  change: PlannedChange,
  listing: FamilyName,
  ownId: number,
): Promise<number[]> {
  // Only the earlier creates of this config in this family: this run's records, and an earlier
  // run's create of another config (one rightly under `listing`), are not taken back.
  const creates = (input.earlierCreates ?? []).filter(
    (create) =>
      create.project === input.project &&
      create.family === input.family &&
      isRecordOfCreate(create, { name: change.name, plugin: change.fields.plugin?.to as number }),
  );
  const answered = new Set(creates.flatMap((create) => (create.id === undefined ? [] : [create.id])));
  // A record an earlier create of another config (or family) made is that create's, not one of these.
  const accounted = new Set(
    (input.earlierCreates ?? []).flatMap((create) => (create.id === undefined ? [] : [create.id])),
  );
  // Each unanswered create made one record at most: as many records as such creates are theirs;
  // more, and which cannot be told. One there before each was sent is none of theirs.
  const unanswered = creates.filter((create) => create.id === undefined);
  const keptByAll = (id: number) =>
    unanswered.length > 0 && unanswered.every((create) => create.kept?.includes(id));
  if (answered.size === 0 && unanswered.length === 0) return [];
  try {
    const records = await listAllConfigs(client, input.project, listing);
    const ofConfig = records.filter(
      (record) => record.id !== ownId && record.deleted !== true && isOfConfig(change, record),
    );
    const made = ofConfig.filter((record) => answered.has(record.id));
    const others = ofConfig.filter(
      (record) => !accounted.has(record.id) && !input.createdByRun.has(record.id) && !keptByAll(record.id),
    );
    const unansweredMade = others.length <= unanswered.length ? others : [];
    return [...made, ...unansweredMade].map((record) => record.id).sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/**
 * The one rule for "is this the record a create made" (apply, resume, rollback): its name as the
 * service stores it ("GeoIP " trimmed), and its plugin when known (where plugin_configs shows the
 * frontend apps, a frontend app of the same name is another config).
 */
export function isRecordOfCreate(
  create: { name: string | null; plugin: unknown },
  record: Pick<PluginConfigRecord, "name" | "plugin">,
): boolean {
  return (
    (create.name === null ? record.name === null : showsText(create.name, record.name)) &&
    (typeof create.plugin !== "number" || record.plugin === create.plugin)
  );
}

export function isOfConfig(change: PlannedChange, record: PluginConfigRecord): boolean {
  return isRecordOfCreate({ name: change.name, plugin: change.fields.plugin?.to }, record);
}

/** Records of the config made since the plan, not this run's for another config. */
function copiesOf(
  records: readonly PluginConfigRecord[],
  change: PlannedChange,
  input: DedupeInput,
  ownId: number | null,
): PluginConfigRecord[] {
  return records.filter(
    (record) =>
      isOfConfig(change, record) &&
      !input.knownIds.has(record.id) &&
      (record.id === ownId || !input.createdByRun.has(record.id)) &&
      (record.id === ownId || sameOwner(change, record)),
  );
}

/** Records of the config another owner made since the plan, lowest id first; none without an owner. */
function rivalCreates(
  records: readonly PluginConfigRecord[],
  change: PlannedChange,
  input: DedupeInput,
): PluginConfigRecord[] {
  if (change.mark === undefined) return [];
  return records
    .filter((record) => {
      const owner = readMark(record.description).owner;
      // Another owner's manifest may spell the name as a look-alike (NFD against NFC, white space
      // at its ends): the planner takes it for the same config, and so does this check.
      const plugin = change.fields.plugin?.to;
      return (
        owner !== null &&
        owner !== change.mark?.owner &&
        sameName(change.name, record.name) &&
        (typeof plugin !== "number" || record.plugin === plugin) &&
        !input.knownIds.has(record.id) &&
        !input.createdByRun.has(record.id)
      );
    })
    .sort((a, b) => a.id - b.id);
}

/** Deletes this run's copies of a config another owner created first: the create is lost to them. */
async function yieldToRival(
  client: ApiClient,
  input: DedupeInput,
  outcome: ApplyOutcome,
  rival: PluginConfigRecord,
  mine: readonly number[],
): Promise<ApplyOutcome> {
  const winner = readMark(rival.description).owner;
  const story = `owner "${winner}" created it at the same time (id ${rival.id}, the lower id, which stays theirs)`;
  const failure = await deleteCopies(client, input, mine);
  return {
    ...outcome,
    ...(failure === undefined ? { id: rival.id } : {}),
    status: "failed",
    message:
      failure === undefined
        ? `${story}; this run's copy (id ${mine.join(", ")}) was deleted`
        : `${story}, but deleting this run's copy (id ${failure.id}) failed: ${describeError(failure.error)}; delete it, or run apply again`,
    ownerLost: { winner },
  };
}

/**
 * Deletes the copies one by one into `removed`; one gone already (its run deleted it first) is skipped.
 * Stops at the first that fails: that copy and why.
 */
async function deleteCopies(
  client: ApiClient,
  input: DedupeInput,
  ids: readonly number[],
  removed: number[] = [],
): Promise<{ id: number; error: unknown } | undefined> {
  const writer = input.writer ?? new RecordWriter(client, undefined);
  for (const id of ids) {
    try {
      const record = await writer.update("copy", input.project, input.family, id, { deleted: true });
      if (record.deleted !== true)
        throw new Error("the server answered but the record is not marked deleted");
      removed.push(id);
    } catch (error) {
      if (isApiError(error, 404)) continue;
      return { id, error };
    }
  }
  return undefined;
}

async function keepSurvivor(
  client: ApiClient,
  input: DedupeInput,
  change: PlannedChange,
  outcome: ApplyOutcome,
  survivor: PluginConfigRecord,
  copies: readonly number[],
  words: { story: string; deleted: string },
): Promise<ApplyOutcome> {
  const { project, family } = input;
  const removedIds: number[] = [];
  const failure = await deleteCopies(client, input, copies, removedIds);
  if (failure !== undefined)
    return {
      ...outcome,
      status: "failed",
      message: `${words.story}, but deleting ${failure.id === outcome.id ? "this run's copy" : "the later copy"} (id ${failure.id}) failed: ${describeError(failure.error)}; run apply again, or delete one of them`,
    };
  const deleted = words.deleted === "" ? "" : `; ${words.deleted}`;
  const differing = mismatchedFields(change, survivor);
  if (differing.length > 0) {
    const body: Record<string, FieldValue> = Object.fromEntries(
      differing.map((field) => [field, change.fields[field]?.to ?? null]),
    );
    // The description a create sets is sent with its owner mark, as the create sent it.
    const text = body.description;
    if (typeof text === "string" || text === null) body.description = markDescription(change, text);
    try {
      const writer = input.writer ?? new RecordWriter(client, undefined);
      const updated = await writer.update("copy", project, family, survivor.id, body as PluginConfigInput);
      const still = mismatchedFields(change, updated);
      if (still.length > 0) throw new Error(`the server did not apply ${still.join(", ")}`);
    } catch (error) {
      return {
        ...outcome,
        id: survivor.id,
        status: "failed",
        message: `${words.story}${deleted}, but updating the survivor failed: ${describeError(error)}; run apply again`,
      };
    }
  }
  return {
    ...outcome,
    id: survivor.id,
    status: "done",
    message: `${words.story}${deleted}${differing.length > 0 ? ` and the survivor's ${differing.join(", ")} set` : ""}`,
    ...(removedIds.length > 0 ? { copiesRemoved: removedIds } : {}),
  };
}
