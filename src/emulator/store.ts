// The emulator's state and every change to it. All changes are synchronous, so concurrent requests
// (interleaved only at await points in the server) can never see or leave a half-made change.

import { randomUUID } from "node:crypto";
import type { FamilyName } from "../families.js";
import type { LogEntry } from "../wire-types.js";
import type { ChangeBatch } from "./data-file.js";
import type { UploadedFile } from "./form-body.js";
import { compareLogEntries } from "./log-stream.js";
import { EMPTY_CONFIG } from "./record-view.js";
import type { EmulatorData, PluginData, ProfileBehaviour, StoredRecord } from "./types.js";
import type { RecordChanges } from "./validation.js";

export function compareRecords(a: StoredRecord, b: StoredRecord): number {
  return a.order - b.order || a.plugin - b.plugin || a.id - b.id;
}

export class EmulatorStore {
  private readonly recordsById = new Map<number, StoredRecord>();
  // A record never changes project: lists scan only their project's records, not all of them.
  private readonly recordsByProject = new Map<number, StoredRecord[]>();
  private readonly pluginsById = new Map<number, PluginData>();
  private lastWriteMs = 0;
  private lastAttachmentId = 0;
  private changeCounter = 0;
  // A big family paged by offset is sorted once per change count, not per page.
  private readonly listed = new Map<string, readonly StoredRecord[]>();
  private listedAt = 0;
  // Since the last takeChanges(): the data-file journal writes only these.
  private changedRecords = new Set<StoredRecord>();
  private newLogEntries: LogEntry[] = [];

  /** `data`: read it freely; change it only through the methods below. */
  constructor(
    readonly data: EmulatorData,
    private readonly profile: ProfileBehaviour,
    private readonly now: () => number = Date.now,
  ) {
    for (const record of data.records) {
      this.index(record);
      for (const { uid } of record.attachments ?? [])
        this.lastAttachmentId = Math.max(this.lastAttachmentId, uid);
    }
    for (const plugin of data.plugins) this.pluginsById.set(plugin.id, plugin);
  }

  private index(record: StoredRecord): void {
    this.recordsById.set(record.id, record);
    const projectRecords = this.recordsByProject.get(record.project);
    if (projectRecords) projectRecords.push(record);
    else this.recordsByProject.set(record.project, [record]);
  }

  private projectRecords(projectId: number): readonly StoredRecord[] {
    return this.recordsByProject.get(projectId) ?? [];
  }

  /** The data-file writer compares it with what it has made durable. */
  get changeCount(): number {
    return this.changeCounter;
  }

  /** Straight from the live objects (no copy); a journal tells by `snapshotId` whether it follows it. */
  toJson(snapshotId: string): string {
    return `${JSON.stringify({ ...this.data, snapshotId }, null, 2)}\n`;
  }

  /** Records as they are now. */
  takeChanges(): ChangeBatch {
    const batch: ChangeBatch = {
      records: [...this.changedRecords],
      logEntries: this.newLogEntries,
      nextRecordId: this.data.nextIds.record,
    };
    this.changedRecords = new Set();
    this.newLogEntries = [];
    return batch;
  }

  plugin(id: number): PluginData | undefined {
    return this.pluginsById.get(id);
  }

  private belongsTo(record: StoredRecord, family: FamilyName): boolean {
    if (this.profile.families === "disjoint") return record.family === family;
    return family === "plugin_configs" || this.pluginsById.get(record.plugin)?.frontendApp === true;
  }

  /** Soft-deleted ones included. */
  findInFamily(projectId: number, family: FamilyName, id: number): StoredRecord | undefined {
    const record = this.recordsById.get(id);
    if (!record || record.project !== projectId || !this.belongsTo(record, family)) return undefined;
    return record;
  }

  listFamily(projectId: number, family: FamilyName): readonly StoredRecord[] {
    if (this.listedAt !== this.changeCounter) {
      this.listed.clear();
      this.listedAt = this.changeCounter;
    }
    const key = `${projectId}/${family}`;
    let records = this.listed.get(key);
    if (records === undefined) {
      records = this.projectRecords(projectId)
        .filter((record) => !record.deleted && this.belongsTo(record, family))
        .sort(compareRecords);
      this.listed.set(key, records);
    }
    return records;
  }

  listEnabled(projectId: number): StoredRecord[] {
    return this.projectRecords(projectId)
      .filter((record) => record.enabled)
      .sort(compareRecords);
  }

  // Every write gets a strictly later updated_at, even within one millisecond, so a client can
  // always tell that a record changed.
  private writeTimestamp(previous?: string): string {
    const previousMs = previous === undefined ? 0 : Date.parse(previous);
    const ms = Math.max(this.now(), this.lastWriteMs + 1, Number.isNaN(previousMs) ? 0 : previousMs + 1);
    this.lastWriteMs = ms;
    return new Date(ms).toISOString();
  }

  createRecord(
    family: FamilyName,
    projectId: number,
    input: RecordChanges & { plugin: number; order: number },
  ): StoredRecord {
    const timestamp = this.writeTimestamp();
    const deleted = input.deleted ?? false;
    const record: StoredRecord = {
      id: this.data.nextIds.record,
      family,
      project: projectId,
      plugin: input.plugin,
      enabled: deleted ? false : (input.enabled ?? false),
      order: input.order,
      name: input.name ?? null,
      description: input.description ?? null,
      deleted,
      match_action: input.match_action ?? null,
      config: input.config ?? EMPTY_CONFIG,
      error: null,
      delivery_rate_24h: null,
      created_at: timestamp,
      updated_at: timestamp,
    };
    this.data.nextIds.record += 1;
    this.data.records.push(record);
    this.index(record);
    this.changedRecords.add(record);
    this.changeCounter += 1;
    return record;
  }

  /** A record marked deleted is always disabled too. */
  updateRecord(record: StoredRecord, changes: RecordChanges): void {
    Object.assign(
      record,
      Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
    );
    if (record.deleted) record.enabled = false;
    this.touch(record);
  }

  private touch(record: StoredRecord): void {
    record.updated_at = this.writeTimestamp(record.updated_at);
    this.changedRecords.add(record);
    this.changeCounter += 1;
  }

  /**
   * Attaches, then detaches, as the service's `_update_plugin_attachments` does; attachment ids only
   * grow. Nothing to do is no change.
   */
  updateAttachments(record: StoredRecord, attach: [string, UploadedFile][], detach: readonly string[]): void {
    if (attach.length + detach.length === 0) return;
    const byKey = new Map((record.attachments ?? []).map((attachment) => [attachment.key, attachment]));
    for (const [key, file] of attach) {
      this.lastAttachmentId += 1;
      byKey.set(key, {
        uid: this.lastAttachmentId,
        key,
        name: file.fileName,
        size: file.size,
        type: file.contentType,
      });
    }
    for (const key of detach) byKey.delete(key);
    if (byKey.size === 0) delete record.attachments;
    else record.attachments = [...byKey.values()];
    this.touch(record);
  }

  appendLog(record: StoredRecord, entry: Pick<LogEntry, "source" | "type" | "message">): LogEntry {
    const logEntry: LogEntry = {
      id: randomUUID(),
      team_id: record.project,
      plugin_id: record.plugin,
      plugin_config_id: record.id,
      timestamp: this.writeTimestamp(),
      source: entry.source,
      type: entry.type,
      message: entry.message,
      instance_id: randomUUID(),
    };
    this.data.logEntries.push(logEntry);
    this.newLogEntries.push(logEntry);
    this.changeCounter += 1;
    return logEntry;
  }

  /** Newest first. */
  logsOf(projectId: number, configId: number): LogEntry[] {
    return this.data.logEntries
      .filter((entry) => entry.team_id === projectId && entry.plugin_config_id === configId)
      .sort(compareLogEntries);
  }
}
