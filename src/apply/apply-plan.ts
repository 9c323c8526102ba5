// Executes a plan through the API: per family, creates and updates, then deletes, then one
// reorder; families run concurrently (bounded). Every write is verified from its response, and
// the report says exactly what was done, what failed and why, what was skipped, and which writes
// have an unknown outcome. Once the signal aborts, no new write starts.

import type { ApiClient, PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import {
  ApiError,
  CreateOutcomeUnknownError,
  createConfigDetailed,
  FamilyReader,
  RequestAbortedError,
  RequestFailedError,
  rearrangeConfigs,
  updateConfig,
} from "../api/index.js";
import { appendAll } from "../append-all.js";
import { describeError } from "../errors.js";
import { type FamilyName, familyKey, type WritableField } from "../families.js";
import { showsEveryRecord } from "../family-lists.js";
import { mapConcurrent } from "../map-concurrent.js";
import { shownValue, showsWritten } from "../plan/compare-fields.js";
import type {
  CurrentState,
  FieldChanges,
  FieldValue,
  Plan,
  PlannedChange,
  PlannedReorder,
} from "../plan/types.js";
import { type CreateSettlement, dedupeCreates } from "./dedupe-creates.js";
import type { ApplyOutcome, ApplyReport, OutcomeStatus } from "./types.js";
import { markedBody, markProblem } from "./write-mark.js";

export interface ApplyOptions {
  /** Families applied at once; the client bounds requests in flight on its own. */
  concurrency: number;
  onProgress?: (done: number, total: number) => void;
  /**
   * Once aborted, no new write starts: changes under way finish, the rest are skipped as not
   * started. Give the client the same signal, so that requests queued in it do not start either.
   */
  signal?: AbortSignal | undefined;
  /** See `CreateConfigOptions.settleWindowMs`: only for a service known never to commit late. */
  settleWindowMs?: number | undefined;
}

const NOT_STARTED = "not started: the run was interrupted";

/** A reorder the interrupt came before: skipped, as not started. */
const REORDER_NOT_STARTED = { status: "skipped", message: NOT_STARTED, notStarted: true } as const;

function notStartedOutcome(change: PlannedChange, detail?: string): ApplyOutcome {
  return {
    ...outcomeOf(change, "skipped", detail === undefined ? NOT_STARTED : `${NOT_STARTED} (${detail})`),
    notStarted: true,
  };
}

/** What apply learns of the server as it goes, shared by all families of one run. */
interface ServerTraits {
  /** Rearrange is refused, or keyed by something other than config ids (posthog-2024). */
  rearrangeUnusable: boolean;
  /**
   * Settles when the run's first rearrange has answered. Families wait for it before their own, so
   * that on a server where rearrange does nothing for us only one request learns that.
   */
  firstRearrange?: Promise<void>;
  /** Ids of the records this run created, in any family: never taken for a concurrent run's copy. */
  createdIds: Set<number>;
}

interface FamilyWork {
  project: string;
  family: FamilyName;
  changes: PlannedChange[];
  reorder: PlannedReorder | undefined;
}

/** A create's outcome and, for the check after the family's creates, how it was settled. */
interface AppliedWrite {
  outcome: ApplyOutcome;
  settlement?: CreateSettlement | undefined;
}

export async function applyPlan(
  client: ApiClient,
  plan: Plan,
  current: CurrentState,
  options: ApplyOptions,
): Promise<ApplyReport> {
  const traits: ServerTraits = { rearrangeUnusable: false, createdIds: new Set() };
  const work = groupWork(plan);
  const total = plan.changes.length + plan.reorders.length;
  let finished = 0;
  const progress = () => options.onProgress?.(++finished, total);

  const perFamily = await mapConcurrent(work, options.concurrency, (item) =>
    applyFamily(client, item, plan, current, traits, options, progress),
  );
  const outcomes = perFamily.flat();
  const counted = (status: OutcomeStatus) => outcomes.filter((outcome) => outcome.status === status).length;
  return {
    outcomes,
    done: counted("done"),
    failed: counted("failed"),
    skipped: counted("skipped"),
    unknown: counted("unknown"),
    unchecked: outcomes.filter((outcome) => outcome.unchecked === true).length,
    interrupted: options.signal?.aborted === true,
  };
}

function groupWork(plan: Plan): FamilyWork[] {
  const groups = new Map<string, FamilyWork>();
  const groupFor = (project: string, family: FamilyName) => {
    const key = familyKey(project, family);
    let group = groups.get(key);
    if (!group) {
      group = { project, family, changes: [], reorder: undefined };
      groups.set(key, group);
    }
    return group;
  };
  for (const change of plan.changes) groupFor(change.project, change.family).changes.push(change);
  for (const reorder of plan.reorders) groupFor(reorder.project, reorder.family).reorder = reorder;
  return [...groups.values()];
}

function outcomeOf(change: PlannedChange, status: OutcomeStatus, message?: string): ApplyOutcome {
  return {
    action: change.action,
    project: change.project,
    family: change.family,
    name: change.name,
    id: change.id,
    source: change.source,
    status,
    ...(message === undefined ? {} : { message }),
  };
}

/**
 * The outcome of a write that threw: unknown when it may have been applied, skipped when the run
 * was interrupted before it was sent, failed otherwise.
 */
function outcomeOfError(change: PlannedChange, error: unknown): ApplyOutcome {
  if (error instanceof RequestFailedError && error.outcomeUnknown) {
    return outcomeOf(
      change,
      "unknown",
      `${error.message}; it may or may not have been applied: run \`pcsync plan\` to see`,
    );
  }
  if (error instanceof RequestAbortedError) return notStartedOutcome(change);
  return outcomeOf(change, "failed", describeError(error));
}

async function applyFamily(
  client: ApiClient,
  work: FamilyWork,
  plan: Plan,
  current: CurrentState,
  traits: ServerTraits,
  options: ApplyOptions,
  progress: () => void,
): Promise<ApplyOutcome[]> {
  const { project, family } = work;
  const { signal } = options;
  const reorderBase = work.reorder && {
    action: "reorder" as const,
    project,
    family,
    name: null,
    id: null,
    source: work.reorder.source,
    moves: work.reorder.moves.length,
  };
  if (signal?.aborted) {
    const outcomes = work.changes.map((change) => notStartedOutcome(change));
    if (reorderBase) outcomes.push({ ...reorderBase, ...REORDER_NOT_STARTED });
    for (const _ of outcomes) progress();
    return outcomes;
  }
  const listed =
    current.families.find((item) => item.project === project && item.family === family)?.records ?? [];
  const knownIds = new Set(listed.map((record) => record.id));
  // The creates' re-reads and the check after them share reads of the family.
  const reader = new FamilyReader(client, project, family);

  const writes = work.changes.filter((change) => change.action !== "delete");
  const deletes = work.changes.filter((change) => change.action === "delete");
  const outcomes: ApplyOutcome[] = [];

  const appliedWrites = await Promise.all(
    writes.map(async (change): Promise<AppliedWrite> => {
      const applied =
        change.action === "create"
          ? await applyCreate(client, change, knownIds, traits.createdIds, reader, options)
          : { outcome: await applyUpdate(client, change) };
      progress();
      return applied;
    }),
  );
  // A concurrent run may have made the same creates, and a POST whose answer was lost may have
  // landed late: one read of the family settles which record of each config stays.
  const writeOutcomes = await dedupeCreates(client, {
    project,
    family,
    knownIds,
    createdByRun: traits.createdIds,
    changes: writes,
    outcomes: appliedWrites.map((applied) => applied.outcome),
    settlements: appliedWrites.map((applied) => applied.settlement),
    reader,
    signal,
  });
  appendAll(outcomes, writeOutcomes);

  const deleteOutcomes = await Promise.all(
    deletes.map(async (change) => {
      const outcome = signal?.aborted ? notStartedOutcome(change) : await applyDelete(client, change);
      progress();
      return outcome;
    }),
  );
  appendAll(outcomes, deleteOutcomes);

  if (work.reorder && reorderBase) {
    const unsettledCreates = writeOutcomes.filter(
      (outcome) =>
        outcome.action === "create" && (outcome.status === "failed" || outcome.status === "unknown"),
    );
    const unknownCreates = unsettledCreates.filter((outcome) => outcome.status === "unknown").length;
    if (signal?.aborted) {
      outcomes.push({ ...reorderBase, ...REORDER_NOT_STARTED });
    } else if (unsettledCreates.length > 0) {
      const what =
        unknownCreates === 0
          ? "failed"
          : unknownCreates === unsettledCreates.length
            ? "have an unknown outcome"
            : "failed or have an unknown outcome";
      outcomes.push({
        ...reorderBase,
        status: "skipped",
        message: `${unsettledCreates.length} create(s) in this family ${what}, so the final order cannot be reached; run apply again once they succeed`,
      });
    } else {
      outcomes.push({ ...reorderBase, ...(await applyReorder(client, work.reorder, plan, current, traits)) });
    }
    progress();
  }
  return outcomes;
}

/** What a create or update sends: the fields it sets, its description with the owner mark if any. */
function bodyOf(change: PlannedChange): PluginConfigInput {
  const body: Record<string, FieldValue> = {};
  for (const [field, fieldChange] of Object.entries(change.fields)) {
    if (fieldChange) body[field] = fieldChange.to;
  }
  return markedBody(change, body as PluginConfigInput);
}

/** Fields whose value in the server's response is not what was written. */
function mismatchedFields(fields: FieldChanges, record: PluginConfigRecord): WritableField[] {
  const wrong: WritableField[] = [];
  for (const [field, change] of Object.entries(fields) as [WritableField, FieldChanges[WritableField]][]) {
    if (!change) continue;
    if (!showsWritten(field, change.to, record)) wrong.push(field);
  }
  return wrong;
}

/** Why the server's answer to a write is not what was written; undefined when it is. */
function writeProblem(change: PlannedChange, record: PluginConfigRecord): string | undefined {
  const wrong = mismatchedFields(change.fields, record);
  return wrong.length > 0 ? mismatchMessage(change, record, wrong) : markProblem(change, record);
}

function mismatchMessage(change: PlannedChange, record: PluginConfigRecord, wrong: WritableField[]): string {
  const details = wrong
    .map(
      (field) =>
        `${field} is ${JSON.stringify(shownValue(field, record))}, not ${JSON.stringify(change.fields[field]?.to)}`,
    )
    .join("; ");
  const hint = wrong.includes("plugin")
    ? `. This server cannot change the plugin of an existing config: to switch plugins, give the config a new name (and drop its "id:" if it has one) so that pcsync creates a new record, then delete or prune record ${record.id}`
    : "";
  return `the server accepted the write but did not apply it: ${details}${hint}`;
}

async function applyCreate(
  client: ApiClient,
  change: PlannedChange,
  knownIds: ReadonlySet<number>,
  createdIds: Set<number>,
  reader: FamilyReader,
  options: ApplyOptions,
): Promise<AppliedWrite> {
  try {
    const created = await createConfigDetailed(client, change.project, change.family, bodyOf(change), {
      knownIds,
      reader,
      settleWindowMs: options.settleWindowMs,
    });
    const { record } = created;
    createdIds.add(record.id);
    const settlement = { uncertain: created.uncertain };
    const problem = writeProblem(change, record);
    if (problem !== undefined)
      return { outcome: outcomeOf({ ...change, id: record.id }, "failed", problem), settlement };
    return { outcome: outcomeOf({ ...change, id: record.id }, "done"), settlement };
  } catch (error) {
    if (error instanceof CreateOutcomeUnknownError) {
      return {
        outcome: outcomeOf(change, "unknown", error.message),
        settlement: { uncertain: true, conclusiveAfter: error.conclusiveAfter },
      };
    }
    if (error instanceof RequestAbortedError) {
      return { outcome: notStartedOutcome(change, error.message) };
    }
    // Any other failure is definitive: createConfig settles every POST whose outcome was unknown,
    // unreadable answers included.
    return { outcome: outcomeOf(change, "failed", describeError(error)) };
  }
}

async function applyUpdate(client: ApiClient, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: update without an id");
  try {
    const record = await updateConfig(client, change.project, change.family, change.id, bodyOf(change));
    const problem = writeProblem(change, record);
    if (problem !== undefined) return outcomeOf(change, "failed", problem);
    return outcomeOf(change, "done");
  } catch (error) {
    return outcomeOfError(change, error);
  }
}

/**
 * Deletes by PATCH `deleted: true`: on every profile that removes the record from the family's
 * list, where DELETE on posthog-2024 servers only disables it.
 */
async function applyDelete(client: ApiClient, change: PlannedChange): Promise<ApplyOutcome> {
  if (change.id === null) return outcomeOf(change, "failed", "internal: delete without an id");
  try {
    const record = await updateConfig(client, change.project, change.family, change.id, { deleted: true });
    if (record.deleted !== true) {
      return outcomeOf(
        change,
        "failed",
        "the server answered the delete but the record is not marked deleted",
      );
    }
    return outcomeOf(change, "done");
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      return outcomeOf(change, "done", "already gone");
    }
    return outcomeOfError(change, error);
  }
}

/**
 * Whether a rearrange keyed by config id is harmless on every server profile: posthog-2024 reads
 * the keys as plugin ids, so it is used only when no key can name a plugin of the project's
 * records (which requires having read lists that show them all).
 */
function rearrangeIsSafe(reorder: PlannedReorder, plan: Plan, current: CurrentState): boolean {
  const lists = current.families.filter((item) => item.project === reorder.project);
  if (!showsEveryRecord(lists.map((item) => item.family))) return false;
  const pluginIds = new Set<number>();
  for (const list of lists) for (const record of list.records) pluginIds.add(record.plugin);
  for (const change of plan.changes) {
    const plugin = change.fields.plugin?.to;
    if (change.project === reorder.project && typeof plugin === "number") pluginIds.add(plugin);
  }
  return reorder.moves.every((move) => !pluginIds.has(move.id));
}

async function applyReorder(
  client: ApiClient,
  reorder: PlannedReorder,
  plan: Plan,
  current: CurrentState,
  traits: ServerTraits,
): Promise<{ status: OutcomeStatus; message: string; notStarted?: boolean }> {
  const { project, family } = reorder;
  let pending = reorder.moves;
  let method = "PATCH order per record";
  const safe = rearrangeIsSafe(reorder, plan, current);
  let settleFirst: (() => void) | undefined;
  if (safe && !traits.rearrangeUnusable) {
    if (traits.firstRearrange) await traits.firstRearrange;
    else
      traits.firstRearrange = new Promise((resolve) => {
        settleFirst = resolve;
      });
  }
  if (safe && !traits.rearrangeUnusable) {
    try {
      const orders: Record<string, number> = {};
      for (const move of reorder.moves) orders[String(move.id)] = move.to;
      const records = await rearrangeConfigs(client, project, family, orders);
      const byId = new Map(records.map((record) => [record.id, record]));
      pending = reorder.moves.filter((move) => byId.get(move.id)?.order !== move.to);
      if (pending.length === 0)
        return { status: "done", message: `${reorder.moves.length} moved by rearrange` };
      // Rearrange answered but did not move our records: it is keyed otherwise on this server.
      traits.rearrangeUnusable = true;
      method = "rearrange, then PATCH order for the records it did not move";
    } catch (error) {
      if (
        !(error instanceof ApiError && (error.status === 403 || error.status === 405 || error.status === 404))
      ) {
        if (error instanceof RequestAbortedError) return REORDER_NOT_STARTED;
        if (error instanceof RequestFailedError && error.outcomeUnknown) {
          return {
            status: "unknown",
            message: `rearrange failed: ${error.message}; it may or may not have been applied: run \`pcsync plan\` to see`,
          };
        }
        return { status: "failed", message: `rearrange failed: ${describeError(error)}` };
      }
      traits.rearrangeUnusable = true;
      method = `PATCH order per record (rearrange refused: ${error.status})`;
    } finally {
      settleFirst?.();
    }
  }
  const failures: string[] = [];
  let unknownMoves = 0;
  let notStarted = 0;
  await Promise.all(
    pending.map(async (move) => {
      try {
        const record = await updateConfig(client, project, family, move.id, { order: move.to });
        if (record.order !== move.to)
          failures.push(`id ${move.id}: order is ${record.order}, not ${move.to}`);
      } catch (error) {
        if (error instanceof RequestAbortedError && !error.outcomeUnknown) notStarted += 1;
        else if (error instanceof RequestFailedError && error.outcomeUnknown) unknownMoves += 1;
        failures.push(`id ${move.id}: ${describeError(error)}`);
      }
    }),
  );
  if (failures.length > 0) {
    // Unknown when no move is known to have failed: some may have been applied.
    const definite = failures.length - unknownMoves - notStarted;
    const status: OutcomeStatus = definite > 0 ? "failed" : unknownMoves > 0 ? "unknown" : "skipped";
    const settle = unknownMoves > 0 ? "; run `pcsync plan` to see which moves were applied" : "";
    return {
      status,
      message: `${failures.length} of ${pending.length} moves failed (${method}): ${failures.join("; ")}${settle}`,
      ...(notStarted === failures.length ? { notStarted: true } : {}),
    };
  }
  return { status: "done", message: `${reorder.moves.length} moved by ${method}` };
}
