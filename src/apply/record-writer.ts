// Every write of an apply passes here: announced to the write-ahead journal (on disk) before it is
// sent, its outcome after the answer. Without a journal (--no-journal) writes go straight to the API.

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
  /** Null for a create and a rearrange. */
  id: number | null;
  name: string | null;
  /** A rearrange: `{orders: {id: order}}`. */
  send: Record<string, FieldValue | Record<string, number>>;
  /** A create: its config's records in the lists it may land in before it was sent; none is its record. */
  kept?: number[];
}

/**
 * `not_sent`: the request never left (interrupted first). `unknown`: sent, no definitive answer.
 * `failed`: answered with a refusal, or with a record that does not show what was written.
 */
export type WriteStatus = "done" | "failed" | "unknown" | "not_sent";

export interface WriteOutcome {
  status: WriteStatus;
  /** A rearrange: the family's records. */
  records?: readonly PluginConfigRecord[];
}

export interface WriteJournal {
  /** Resolves once the intent and its before images are on disk. */
  intend(intent: WriteIntent): Promise<number>;
  /** On disk with the next group of intents, or when the journal closes. */
  recordOutcome(seq: number, outcome: WriteOutcome): void;
}

function statusOfError(error: unknown): WriteStatus {
  if (isServiceError(error, "create_outcome_unknown")) return "unknown";
  if (isRequestError(error) && error.outcomeUnknown) return "unknown";
  if (isRequestError(error, "request_aborted")) return "not_sent";
  return "failed";
}

export class RecordWriter {
  constructor(
    readonly client: ApiClient,
    private readonly journal: WriteJournal | undefined,
    private readonly createRule: CreateRule = {},
  ) {}

  async #journaled<T>(
    intent: WriteIntent,
    send: () => Promise<T>,
    answered: (result: T) => readonly PluginConfigRecord[],
  ): Promise<T> {
    const journal = this.journal;
    if (journal === undefined) return await send();
    // The intent goes on disk once the write has its slot, just before it leaves: a write still waiting
    // for a connection when the run is killed was never sent, and a resume or rollback need not wait for it.
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
