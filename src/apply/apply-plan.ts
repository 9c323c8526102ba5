// Executes a plan: per family (concurrently, bounded) creates and updates, then deletes, then one
// reorder, each verified from its answer. Once the signal aborts, no new write starts.

import type { ApiClient } from "../api/index.js";
import { type FamilyName, familyKey, ofFamily } from "../families.js";
import { familiesListing } from "../family-lists.js";
import { groupBy } from "../group-by.js";
import { mapConcurrent } from "../map-concurrent.js";
import type { CurrentState, Plan, PlannedChange, PlannedReorder } from "../plan/types.js";
import { plural } from "../plural.js";
import type { PluginConfigRecord } from "../wire-types.js";
import { type CreateConfigOptions, FamilyReader } from "./create-config.js";
import { dedupeCreates, type EarlierCreate, isOfConfig } from "./dedupe-creates.js";
import { notStartedOutcome, REORDER_NOT_STARTED } from "./outcomes.js";
import { type CreateRule, settleWindowMs } from "./proof-window.js";
import { RecordWriter, type WriteJournal } from "./record-writer.js";
import { applyReorder, type RearrangeProbe } from "./reorder.js";
import type { ApplyOutcome, ApplyReport, OutcomeStatus } from "./types.js";
import { type AppliedWrite, applyCreate, applyDelete, applyUpdate } from "./write-and-verify.js";

export interface ApplyOptions {
  /** Families applied at once; the client bounds requests in flight on its own. */
  concurrency: number;
  onProgress?: (done: number, total: number, outcome: ApplyOutcome) => void;
  /** Give the client the same signal, so that requests queued in it do not start either. */
  signal?: AbortSignal | undefined;
  /** None: --no-journal. */
  journal?: WriteJournal | undefined;
  create?: CreateRule | undefined;
  /** Records the interrupted run this one resumes created: this run's own. */
  createdBefore?: Iterable<number> | undefined;
  /**
   * Creates the run this one resumes, or one killed here lately, sent: a record of theirs the service
   * keeps in another family's list is taken back with this run's own (dedupe-creates.ts, `unlistedCreate`).
   */
  earlierCreates?: readonly EarlierCreate[] | undefined;
}

export async function applyPlan(
  client: ApiClient,
  plan: Plan,
  current: CurrentState,
  options: ApplyOptions,
): Promise<ApplyReport> {
  const run: RunContext = {
    plan,
    current,
    options,
    rearrange: { unusable: false },
    createdIds: new Set(options.createdBefore),
    progress: (outcome) => options.onProgress?.(++finished, total, outcome),
  };
  const total = plan.changes.length + plan.reorders.length;
  let finished = 0;
  const startedAt = client.now();
  const perFamily = await mapConcurrent(groupWork(plan), options.concurrency, (work) =>
    applyFamily(new RecordWriter(client, options.journal, options.create), work, run),
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
    ...mayLandUntil(client, startedAt),
    ...throttledUntil(client),
  };
}

/** An update or delete sent again after no answer may still land for a proof window from the give-up. */
function mayLandUntil(client: ApiClient, since: number): Pick<ApplyReport, "mayLandUntil"> {
  const at = client.stats.lastUnansweredWriteAt;
  if (at === undefined || at < since) return {};
  return { mayLandUntil: new Date(at + settleWindowMs(client.requestTimeoutMs, client.timeScale)) };
}

function throttledUntil(client: ApiClient): Pick<ApplyReport, "throttledUntil"> {
  const until = client.stats.throttledUntil;
  return until === undefined || until <= client.now() ? {} : { throttledUntil: new Date(until) };
}

/** Shared by all the run's families. */
interface RunContext {
  plan: Plan;
  current: CurrentState;
  options: ApplyOptions;
  rearrange: RearrangeProbe;
  /** In any family: never taken for a concurrent run's copy. */
  createdIds: Set<number>;
  progress: (outcome: ApplyOutcome) => void;
}

async function applyFamily(writer: RecordWriter, work: FamilyWork, run: RunContext): Promise<ApplyOutcome[]> {
  const { project, family } = work;
  const { plan, current, progress } = run;
  const { signal } = run.options;
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
    for (const outcome of outcomes) progress(outcome);
    return outcomes;
  }
  const listed = current.families.find(ofFamily(project, family))?.records ?? [];
  const knownIds = new Set(listed.map((record) => record.id));
  // The creates' re-reads and the check after them share reads of the family.
  const { client } = writer;
  const reader = new FamilyReader(client, project, family);

  const writes = work.changes.filter((change) => change.action !== "delete");
  const deletes = work.changes.filter((change) => change.action === "delete");
  const elsewhere = writes.some((change) => change.action === "create")
    ? await listsShowingFamily(client, project, family, current)
    : undefined;

  // Its journal line names its config's records among them: none is its record (RecordWriter.create).
  const listedBefore = [...listed, ...(elsewhere?.flatMap((list) => list.records) ?? [])];
  const appliedWrites = await Promise.all(
    writes.map(async (change): Promise<AppliedWrite> => {
      const applied =
        change.action === "create"
          ? await applyCreate(
              writer,
              change,
              run.createdIds,
              { knownIds, reader, ...(elsewhere === undefined ? {} : { elsewhere }) },
              [
                ...new Set(
                  listedBefore.filter((record) => isOfConfig(change, record)).map((record) => record.id),
                ),
              ],
            )
          : { outcome: await applyUpdate(writer, change) };
      progress(applied.outcome);
      return applied;
    }),
  );
  // A concurrent run may have made the same creates, and a POST whose answer was lost may have
  // landed late: one read of the family decides which record of each config stays.
  const writeOutcomes = await dedupeCreates(client, {
    writer,
    project,
    family,
    knownIds,
    createdByRun: run.createdIds,
    earlierCreates: run.options.earlierCreates,
    changes: writes,
    outcomes: appliedWrites.map((applied) => applied.outcome),
    certainties: appliedWrites.map((applied) => applied.certainty),
    reader,
    signal,
  });

  const deleteOutcomes = await Promise.all(
    deletes.map(async (change) => {
      const outcome = signal?.aborted ? notStartedOutcome(change) : await applyDelete(writer, change);
      progress(outcome);
      return outcome;
    }),
  );
  const outcomes = [...writeOutcomes, ...deleteOutcomes];

  if (work.reorder && reorderBase) {
    const unfinishedCreates = writeOutcomes.filter(
      (outcome) =>
        outcome.action === "create" && (outcome.status === "failed" || outcome.status === "unknown"),
    );
    const unknownCreates = unfinishedCreates.filter((outcome) => outcome.status === "unknown").length;
    const what =
      unknownCreates === 0
        ? "failed"
        : unknownCreates === unfinishedCreates.length
          ? "have an unknown outcome"
          : "failed or have an unknown outcome";
    const reordered: ApplyOutcome = {
      ...reorderBase,
      ...(signal?.aborted
        ? REORDER_NOT_STARTED
        : unfinishedCreates.length > 0
          ? {
              status: "skipped" as const,
              message: `${plural(unfinishedCreates.length, "create")} in this family ${what}, so the final order cannot be reached; run apply again once they succeed`,
            }
          : await applyReorder(writer, work.reorder, plan, current, run.rearrange)),
    };
    outcomes.push(reordered);
    progress(reordered);
  }
  return outcomes;
}

/**
 * The lists that also show the family's records, with their ids before its creates (the plan's read,
 * else read now). One that cannot be read is left out: the creates are settled by their family alone.
 */
async function listsShowingFamily(
  client: ApiClient,
  project: string,
  family: FamilyName,
  current: CurrentState,
): Promise<(NonNullable<CreateConfigOptions["elsewhere"]>[number] & { records: PluginConfigRecord[] })[]> {
  const lists: Awaited<ReturnType<typeof listsShowingFamily>> = [];
  for (const listing of familiesListing(family)) {
    const reader = new FamilyReader(client, project, listing);
    const read = current.families.find(ofFamily(project, listing))?.records;
    try {
      const records = read ?? (await reader.read(client.now())).records;
      lists.push({ reader, knownIds: new Set(records.map((record) => record.id)), records });
    } catch {}
  }
  return lists;
}

interface FamilyWork {
  project: string;
  family: FamilyName;
  changes: PlannedChange[];
  reorder: PlannedReorder | undefined;
}

/** In the order first met in the plan. */
function groupWork(plan: Plan): FamilyWork[] {
  const changes = groupBy(plan.changes, (change) => familyKey(change.project, change.family));
  const reorders = new Map(
    plan.reorders.map((reorder) => [familyKey(reorder.project, reorder.family), reorder]),
  );
  const work: FamilyWork[] = [];
  for (const key of new Set([...changes.keys(), ...reorders.keys()])) {
    const familyChanges = changes.get(key) ?? [];
    const reorder = reorders.get(key);
    const first = familyChanges[0] ?? reorder;
    if (first === undefined) continue;
    work.push({ project: first.project, family: first.family, changes: familyChanges, reorder });
  }
  return work;
}
