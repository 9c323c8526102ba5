// What a rollback reads before it plans: the lists of every family the journal's run touched, and,
// one by one, each record it touched that no list shows (a deleted record: does the row remain?),
// and, where neither the journal nor a list says it, the plugin's own name and description.

import { type ApiClient, getConfig, isApiError, type PluginConfigRecord } from "../api/index.js";
import { listsToRead } from "../family-lists.js";
import { pluginDefaults } from "../filled-defaults.js";
import { mapConcurrent } from "../map-concurrent.js";
import { recordKey } from "../plan/fingerprint.js";
import type { CurrentState } from "../plan/types.js";
import { readCurrentState } from "../read/read-current-state.js";
import type { Journal, PluginTexts } from "./journal-format.js";
import { planRollback, type RollbackPlan, recordsToRetrieve } from "./plan-rollback.js";
import { type Replay, replayJournal, type TouchedRecord } from "./replay-journal.js";

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
  await learnPluginTexts(client, replay, { lists: current, alone: retrievedState }, options);
  const planned = planRollback({ journal, replay, current, retrieved, force: options.force });
  return {
    ...planned,
    // Saved with -o, the plan names its server as plan's do: show and apply --plan check it.
    plan: { ...planned.plan, server: client.base.display },
    current,
    retrievedState,
  };
}

function hasTexts(texts: PluginTexts | undefined): texts is PluginTexts {
  return texts !== undefined && (texts.name !== undefined || texts.description !== undefined);
}

/**
 * Gives the touched records the plugin's own texts where the journal lacks them and the lists do
 * not show them. A server that shows those texts for an empty name or description (posthog-2024)
 * leaves plugin_info out of its lists, so a before image read from a list holds the plugin's text
 * where the record holds nothing; only an answer to a write (the journal's outcome, lost when the
 * answer was) or a record read alone says it. The texts belong to the plugin: one record of it
 * says them for all. Where nothing says them, one record of the plugin is read alone.
 */
export async function learnPluginTexts(
  client: ApiClient,
  replay: Replay,
  read: { lists: CurrentState; alone: CurrentState },
  options: { concurrency: number },
): Promise<void> {
  const pluginOf = (touched: TouchedRecord): number | undefined => {
    const plugin = touched.before?.plugin ?? touched.after.get("plugin")?.[0];
    return typeof plugin === "number" ? plugin : undefined;
  };
  // Families whose list shows plugin_info: their before images show what the records hold.
  const withInfo = new Set<string>();
  for (const { project, family, records } of read.lists.families)
    if (records.some((record) => record.plugin_info != null)) withInfo.add(`${project}/${family}`);
  const byPlugin = new Map<number, PluginTexts>();
  for (const touched of replay.records.values()) {
    const plugin = pluginOf(touched);
    if (plugin !== undefined && hasTexts(touched.pluginTexts)) byPlugin.set(plugin, touched.pluginTexts);
  }
  for (const { records } of [...read.lists.families, ...read.alone.families])
    for (const record of records) {
      const texts = pluginDefaults(record);
      if (hasTexts(texts) && !byPlugin.has(record.plugin)) byPlugin.set(record.plugin, texts);
    }
  // Only a before image can hold the plugin's text by mistake: records the run created have none.
  const lacking = [...replay.records.values()].filter(
    (touched) =>
      touched.before !== null &&
      !hasTexts(touched.pluginTexts) &&
      !withInfo.has(`${touched.project}/${touched.family}`),
  );
  const unknown = new Map<number, TouchedRecord[]>();
  for (const touched of lacking) {
    const plugin = pluginOf(touched);
    if (plugin !== undefined && !byPlugin.has(plugin))
      unknown.set(plugin, [...(unknown.get(plugin) ?? []), touched]);
  }
  await mapConcurrent([...unknown.values()], options.concurrency, async (candidates) => {
    for (const touched of candidates) {
      let record: PluginConfigRecord;
      try {
        record = await getConfig(client, touched.project, touched.family, touched.id);
      } catch (error) {
        if (isApiError(error, 404)) continue;
        throw error;
      }
      const texts = pluginDefaults(record);
      if (hasTexts(texts)) byPlugin.set(record.plugin, texts);
      return;
    }
  });
  for (const touched of lacking) {
    const plugin = pluginOf(touched);
    const texts = plugin === undefined ? undefined : byPlugin.get(plugin);
    if (texts) touched.pluginTexts = texts;
  }
}
