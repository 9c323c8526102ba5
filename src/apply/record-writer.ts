// The one place every write of an apply passes: each create, PATCH and rearrange is announced to
// the write-ahead journal (its intent, on disk) before it is sent, and its outcome after the answer.
// Without a journal (--no-journal) the writes go straight to the API.

import type { ApiClient, PluginConfigInput, PluginConfigRecord } from "../api/index.js";
import { isRequestError, isServiceError, rearrangeConfigs, updateConfig } from "../api/index.js";
import type { FamilyName } from "../families.js";
import type { FieldValue } from "../plan/types.js";
import { type CreateConfigOptions, type CreateResult, createConfigDetailed } from "./create-config.js";
import type { CreateRule } from "./proof-window.js";

/** What a write is for: `copy` deletes or fixes a duplicate found after the family's creates. */
export type WriteOp = "create" | "update" | "delete" | "order" | "rearrange" | "copy";

export interface WriteIntent {
  op: WriteOp;
  project: string;
  family: FamilyName;
  /** The record written; null for a create and a rearrange. */
  id: number | null;
  name: string | null;
  /** The body sent (a rearrange: `{orders: {id: order}}`). */
  send: Record<string, FieldValue | Record<string, number>>;
  /**
   * A create: the records of its config (its name and plugin) that the lists it may appear in
   * held before it was sent. None of them is its record, whatever became of it.
   */
  kept?: number[];
}

/**
 * `not_sent`: the request never left (interrupted first). `unknown`: sent, no definitive answer.
 * `failed`: answered with a refusal, or with a record that does not show what was written.
 */
export type WriteStatus = "done" | "failed" | "unknown" | "not_sent";

export interface WriteOutcome {
  status: WriteStatus;
  /** The record as the server answered (a create's id; a rearrange: the family's records). */
  records?: readonly PluginConfigRecord[];
}

export interface WriteJournal {
  /** Puts the intent and the before image of every record it touches on disk; resolves after. */
  intend(intent: WriteIntent): Promise<number>;
  /** Records the answer; on disk with the next group of intents, or when the journal closes. */
  recordOutcome(seq: number, outcome: WriteOutcome): void;
}

function statusOfError(error: unknown): WriteStatus {
  if (isServiceError(error, "create_outcome_unknown")) return "unknown";
  if (isRequestError(error) && error.outcomeUnknown) return "unknown";
  if (isRequestError(error, "request_aborted")) return "not_sent";
  return "failed";
}

/** Creates, updates and rearranges records of one run, each through the journal when there is one. */
export class RecordWriter {
  constructor(
    readonly client: ApiClient,
    private readonly journal: WriteJournal | undefined,
    /** How this run's creates are settled (apply's options). */
    private readonly createRule: CreateRule = {},
  ) {}

  async #journaled<T>(
    intent: WriteIntent,
    send: () => Promise<T>,
    answered: (result: T) => readonly PluginConfigRecord[],
  ): Promise<T> {
    const journal = this.journal;
    if (journal === undefined) return await send();
    // The intent goes on disk once the write has its slot, just before it leaves: a write still
    // waiting for a connection when the run is killed was never sent, and its journal says nothing
    // of it (a resume or rollback does not wait for it to land).
    let seq: number | undefined;
    let result: T;
    try {
      result = await this.client.beforeFirstWrite(async () => {
        seq = await journal.intend(intent);
      }, send);
    } catch (error) {
      if (seq !== undefined) journal.recordOutcome(seq, { status: statusOfError(error) });
      throw error;
    }
    // Every write sends a request; should one ever be settled without sending, it is journaled all the same.
    seq ??= await journal.intend(intent);
    journal.recordOutcome(seq, { status: "done", records: answered(result) });
    return result;
  }

  create(
    project: string,
    family: FamilyName,
    body: PluginConfigInput,
    options: CreateConfigOptions,
    kept: readonly number[] = [],
  ): Promise<CreateResult> {
    return this.#journaled(
      {
        op: "create",
        project,
        family,
        id: null,
        name: body.name ?? null,
        send: { ...body },
        ...(kept.length > 0 ? { kept: [...kept] } : {}),
      },
      () => createConfigDetailed(this.client, project, family, body, { ...this.createRule, ...options }),
      (created) => [created.record],
    );
  }

  update(
    op: "update" | "delete" | "order" | "copy",
    project: string,
    family: FamilyName,
    id: number,
    body: PluginConfigInput,
    name: string | null = null,
  ): Promise<PluginConfigRecord> {
    return this.#journaled(
      { op, project, family, id, name, send: { ...body } },
      () => updateConfig(this.client, project, family, id, body),
      (record) => [record],
    );
  }

  rearrange(
    project: string,
    family: FamilyName,
    orders: Record<string, number>,
  ): Promise<PluginConfigRecord[]> {
    return this.#journaled(
      { op: "rearrange", project, family, id: null, name: null, send: { orders } },
      () => rearrangeConfigs(this.client, project, family, orders),
      (records) => records,
    );
  }
}
