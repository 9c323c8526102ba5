// What a rollback reads before it plans: the lists of every family the journal's run touched, and,
// one by one, each record it touched that no list shows (a deleted record: does the row remain?).

import { type ApiClient, getConfig, isApiError, type PluginConfigRecord } from "../api/index.js";
import { listsToRead } from "../family-lists.js";
import { mapConcurrent } from "../map-concurrent.js";
import { recordKey } from "../plan/fingerprint.js";
import type { CurrentState } from "../plan/types.js";
import { readCurrentState } from "../read/read-current-state.js";
import type { Journal } from "./journal-format.js";
import { planRollback, type RollbackPlan, recordsToRetrieve } from "./plan-rollback.js";
import { replayJournal } from "./replay-journal.js";

export interface RollbackState extends RollbackPlan {
  current: CurrentState;
  /** The records read one by one, as lists of their families (for the rollback's own journal). */
  retrievedState: CurrentState;
}

export async function readAndPlanRollback(
  client: ApiClient,
  journal: Journal,
  options: { concurrency: number; force: boolean },
): Promise<RollbackState> {
  const replay = replayJournal(journal);
  const families = new Map<
    string,
    { project: string; family: (typeof journal.header.families)[number]["family"] }
  >();
  for (const item of [...journal.header.families, ...replay.records.values(), ...replay.lostCreates])
    families.set(`${item.project}/${item.family}`, { project: item.project, family: item.family });
  const current = await readCurrentState(
    client,
    listsToRead([...families.values()].map((ref) => ({ ...ref, wholeFamily: true }))),
    { concurrency: options.concurrency },
  );
  const retrieved = new Map<string, PluginConfigRecord | null>();
  const retrievedState: CurrentState = { families: [] };
  await mapConcurrent(recordsToRetrieve(replay, current), options.concurrency, async (touched) => {
    let record: PluginConfigRecord | null;
    try {
      record = await getConfig(client, touched.project, touched.family, touched.id);
    } catch (error) {
      // Only a 404 says the row is gone: anything else is an error, never a reason to create again.
      if (!isApiError(error, 404)) throw error;
      record = null;
    }
    retrieved.set(recordKey(touched.project, touched.family, touched.id), record);
    if (record)
      retrievedState.families.push({ project: touched.project, family: touched.family, records: [record] });
  });
  return {
    ...planRollback({ journal, replay, current, retrieved, force: options.force }),
    current,
    retrievedState,
  };
}
