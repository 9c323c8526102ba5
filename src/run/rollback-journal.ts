// The rollback of one journal (`pcsync rollback`, a rollout's halted waves): held, read, the inverse
// planned, refused where records changed since or a name is taken, then applied with its own journal.

import { type ApiClient, getConfig, isApiError } from "../api/index.js";
import type { ApplyReport } from "../apply/types.js";
import { familiesListing, listsToRead } from "../family-lists.js";
import { isInputError } from "../input-error.js";
import type { JournalStart } from "../journal/apply-journal.js";
import {
  checkJournalExists,
  checkJournalServer,
  type Journal,
  readJournal,
  tornLineNote,
} from "../journal/journal-format.js";
import { JournalLock } from "../journal/journal-lock.js";
import {
  findNameClashes,
  planRollback,
  type RollbackConflict,
  type RollbackPlan,
  recordsToRetrieve,
} from "../journal/plan-rollback.js";
import { learnPluginTexts, replayJournal } from "../journal/replay-journal.js";
import { mapConcurrent } from "../map-concurrent.js";
import { hasChanges } from "../plan/plan-file.js";
import type { CurrentState, Plan } from "../plan/types.js";
import { readCurrentState } from "../read/read-current-state.js";
import { RefusedError } from "../refused-error.js";
import { createShown, lateWritesOf, waitForLateWrites } from "./late-writes.js";

export interface RollbackInput {
  journal: string;
  cwd: string;
  force: boolean;
  concurrency: number;
  /** Plan and show only: the journal is looked at, not held, and nothing is written. */
  dryRun?: boolean | undefined;
}

export interface RollbackSteps {
  /** Called once the journal is held and read; the caller closes the client. */
  connect: () => Promise<ApiClient>;
  onNote: (line: string) => void;
  /** A lock that cannot be made where the journal is: the rollback goes on without holding it. */
  onUnlockable?: ((message: string) => void) | undefined;
  /** Before anything is written (a dry run ends after it). */
  show?: ((state: RollbackState, journal: Journal) => Promise<void>) | undefined;
  /** Throws to cancel; then the state is planned again, refused if its changes are not those approved. */
  approve?: ((state: RollbackState, client: ApiClient) => Promise<void>) | undefined;
  apply: (run: RollbackApply) => Promise<ApplyReport>;
}

export interface RollbackApply {
  client: ApiClient;
  plan: Plan;
  current: CurrentState;
  /** Records the lists do not show that the rollback's journal must know as they are. */
  alsoKnown: CurrentState;
  start: Omit<JournalStart, "server" | "plan">;
}

export type RollbackOutcome =
  /** Not rolled back: records changed since the run (and no force), or names another record holds. */
  | {
      result: "refused";
      journal: Journal;
      conflicts: readonly RollbackConflict[];
      clashes: readonly string[];
    }
  /** Every record the run touched is as it was before it. */
  | { result: "nothing"; journal: Journal; state: RollbackState }
  | { result: "shown"; journal: Journal; state: RollbackState }
  | { result: "applied"; journal: Journal; state: RollbackState; report: ApplyReport };

export interface RollbackState extends RollbackPlan {
  current: CurrentState;
  /** The records read one by one, as lists (for the rollback's own journal). */
  retrievedState: CurrentState;
}

async function readAndPlanRollback(
  client: ApiClient,
  journal: Journal,
  input: RollbackInput,
): Promise<RollbackState> {
  const replay = replayJournal(journal);
  // Each list once (listsToRead): the families the run touched, and their lists.
  const needs = [
    ...journal.header.families,
    ...replay.records.values(),
    ...replay.lostCreates,
    // A lost create's record may be kept in a family whose list also shows its family's.
    ...replay.lostCreates.flatMap(({ project, family }) =>
      familiesListing(family).map((listing) => ({ project, family: listing })),
    ),
  ].map(({ project, family }) => ({ project, family, wholeFamily: true }));
  const current = await readCurrentState(client, listsToRead(needs), { concurrency: input.concurrency });
  // A record no list shows (a deleted one) is read alone: does the service still have the row?
  const retrievedState: CurrentState = { families: [] };
  await mapConcurrent(
    recordsToRetrieve(replay, current),
    input.concurrency,
    async ({ project, family, id }) => {
      try {
        retrievedState.families.push({
          project,
          family,
          records: [await getConfig(client, project, family, id)],
        });
      } catch (error) {
        // Only a 404 says the row is gone: anything else is an error, never a reason to create again.
        if (!isApiError(error, 404)) throw error;
      }
    },
  );
  await learnPluginTexts(client, replay, { lists: current, alone: retrievedState }, input);
  const planned = planRollback({ journal, replay, current, retrieved: retrievedState, force: input.force });
  return {
    ...planned,
    // Saved with -o, the plan names its server as plan's do: show and apply --plan check it.
    plan: { ...planned.plan, server: client.base.display },
    current,
    retrievedState,
  };
}

/** How it ended is the outcome, not an error. */
export async function rollBackJournal(input: RollbackInput, steps: RollbackSteps): Promise<RollbackOutcome> {
  await checkJournalExists(input.journal, input.cwd);
  const lock = await holdJournal(input, steps);
  try {
    const journal = await readJournal(input.journal, input.cwd);
    const torn = tornLineNote(journal);
    if (torn !== undefined) steps.onNote(torn);
    const client = await steps.connect();
    checkJournalServer(journal, client.base.display);
    let shown = await readAndPlanRollback(client, journal, input);
    // A write of the run that may still land could undo the rollback afterwards: read after it (a
    // create the state already shows has nothing left in flight).
    const late = lateWritesOf(journal, client, {
      which: (intent) => !createShown(intent, shown.current) && !createShown(intent, shown.retrievedState),
    });
    const readAgain = await waitForLateWrites(late, {
      what: "Rollback",
      reading: "what to roll back",
      dryRun: input.dryRun === true,
      onNote: steps.onNote,
      signal: client.signal,
    });
    if (readAgain) shown = await readAndPlanRollback(client, journal, input);
    for (const line of shown.notes) steps.onNote(`note: ${line}`);
    const clashes = findNameClashes(shown.plan, shown.current, shown.retrievedState);
    if (clashes.length > 0 || (shown.conflicts.length > 0 && !input.force))
      return { result: "refused", journal, conflicts: shown.conflicts, clashes };
    await steps.show?.(shown, journal);
    if (input.dryRun) return { result: "shown", journal, state: shown };
    if (!hasChanges(shown.plan)) return { result: "nothing", journal, state: shown };
    let state = shown;
    if (steps.approve !== undefined) {
      await steps.approve(shown, client);
      // The answer may come minutes later: the plan approved is applied only if it still stands.
      state = await readAndPlanRollback(client, journal, input);
      const again = findNameClashes(state.plan, state.current, state.retrievedState);
      if (again.length > 0)
        throw new RefusedError("rollback_name_taken", { journal: journal.path, clashes: again });
      if (
        JSON.stringify(state.plan.changes) !== JSON.stringify(shown.plan.changes) ||
        (state.conflicts.length > 0 && !input.force)
      ) {
        throw new RefusedError("changed_while_asking", {
          reasons: ["the records the rollback changes were changed; run it again to see its plan now"],
        });
      }
    }
    const report = await steps.apply({
      client,
      plan: state.plan,
      current: state.current,
      alsoKnown: state.retrievedState,
      start: { command: "rollback", planFile: null, rollbackOf: journal.path },
    });
    return { result: "applied", journal, state, report };
  } finally {
    await lock?.release();
  }
}

/**
 * A rollback holds the journal it undoes (a dry run only looks). One in a directory this user cannot
 * write (an artifact) is written by no run of this user either: the held check stands, the lock cannot.
 */
async function holdJournal(input: RollbackInput, steps: RollbackSteps): Promise<JournalLock | undefined> {
  if (input.dryRun) {
    await JournalLock.refuseIfHeld(input.journal, { cwd: input.cwd });
    return undefined;
  }
  let lock: JournalLock | undefined;
  try {
    lock = await JournalLock.acquire(input.journal, { cwd: input.cwd, command: "rollback" });
  } catch (error) {
    if (!isInputError(error, "journal_unlockable") || steps.onUnlockable === undefined) throw error;
    await JournalLock.refuseIfHeld(input.journal, { cwd: input.cwd });
    steps.onUnlockable(error.message);
  }
  if (lock?.takeOverNote !== undefined) steps.onNote(lock.takeOverNote);
  return lock;
}
