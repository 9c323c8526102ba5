// Synthesized log entries: each enabled config logs at a steady rate, computed on each read (nothing
// stored, no timers). Entry k (k >= 1) is stamped created_at + k * interval.

import { compareText } from "../manifest/compare-projects.js";
import type { LogEntry, Page } from "../wire-types.js";
import { logErrorRatio } from "./faults.js";
import { type PageRequest, paginateCounted } from "./pagination.js";
import { shownText } from "./record-view.js";
import type { LogErrorFault, PluginData, ProfileBehaviour, StoredRecord } from "./types.js";

export const DEFAULT_LOG_RATE = 60;
export const LOG_WINDOW_MS = 24 * 3_600_000;
/** One entry per millisecond: timestamps stay distinct, so the order needs no tie-break among them. */
export const MAX_LOG_RATE = 60_000;
// Contents repeat every PERIOD entries, so a filter's matches are counted by arithmetic and no read
// makes more entries than the page it returns. Also the resolution of an ERROR ratio (0.001).
const PERIOD = 1000;

/** Upper-case types (empty: all), lower-case search, instants in ms. */
export interface LogFilter {
  types: ReadonlySet<string>;
  search: string;
  after: number | undefined;
  before: number | undefined;
}

export function matchesLogFilter(entry: Pick<LogEntry, "type" | "message" | "timestamp">, filter: LogFilter) {
  return (
    matchesContent(entry, filter) &&
    (filter.after === undefined || Date.parse(entry.timestamp) > filter.after) &&
    (filter.before === undefined || Date.parse(entry.timestamp) < filter.before)
  );
}

function matchesContent(content: LogContent, filter: LogFilter): boolean {
  return (
    (filter.types.size === 0 || filter.types.has(content.type.toUpperCase())) &&
    (filter.search === "" || content.message.toLowerCase().includes(filter.search))
  );
}

type LogContent = Pick<LogEntry, "type" | "message">;

// A 32-bit integer hash (lowbias32): the same input gives the same entry on every run and machine.
function hash32(value: number): number {
  let x = value >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

const EVENTS = ["$pageview", "$autocapture", "signed_up", "purchase", "$identify", "checkout_started"];

function normalContent(position: number): LogContent {
  const h = hash32(position + 0x51ed);
  const n = 1 + (hash32(h) % 200);
  const ms = 40 + (hash32(h + 1) % 900);
  const event = EVENTS[h % EVENTS.length] ?? "$pageview";
  const roll = h % 100;
  if (roll < 4) {
    return (h >>> 8) % 2 === 0
      ? {
          type: "WARN",
          message: `Destination answered slowly (${ms * 4} ms); the batch will be retried if it times out`,
        }
      : { type: "WARN", message: `Skipped ${1 + (n % 5)} events without a distinct_id` };
  }
  if (roll < 14)
    return { type: "LOG", message: `processEvent: enriched ${event} for distinct_id user-${n * 37}` };
  switch ((h >>> 8) % 3) {
    case 0:
      return { type: "INFO", message: `Processed a batch of ${n} events in ${ms} ms` };
    case 1:
      return { type: "INFO", message: `Exported ${n} events to the destination` };
    default:
      return { type: "INFO", message: `Handled ${event} (${n} properties)` };
  }
}

function errorContent(position: number): LogContent {
  const h = hash32(position + 0xe770);
  const messages = [
    "Error: the destination answered 500 Internal Server Error; the batch was not exported",
    "TypeError: Cannot read properties of undefined (reading 'properties') in processEvent",
    `Error: export timed out after ${10 + (h % 20)} s; events were dropped`,
    "Error: the config is invalid: required field is missing or has the wrong type",
  ];
  return { type: "ERROR", message: messages[(h >>> 4) % messages.length] ?? "Error" };
}

const NORMAL = Array.from({ length: PERIOD }, (_, position) => normalContent(position));
const ERRORS = Array.from({ length: PERIOD }, (_, position) => errorContent(position));

// Spreading ERRORs evenly (the j-th of a period is one when ceil(j * share) steps up) makes every
// prefix of the entries after a change hold ceil(n * share) of them: the first entry already is one,
// and a reader that counts a few entries sees the share as configured.
function isErrorPosition(position: number, errorsPerPeriod: number): boolean {
  return (
    Math.ceil(((position + 1) * errorsPerPeriod) / PERIOD) > Math.ceil((position * errorsPerPeriod) / PERIOD)
  );
}

/** A range of entry indices whose contents repeat: entry k shows table[(k - base) mod PERIOD]. */
class Segment {
  private readonly positions: number[] = [];
  private readonly before = new Int32Array(PERIOD + 1);

  constructor(
    readonly lo: number,
    readonly hi: number,
    private readonly base: number,
    private readonly table: (position: number) => LogContent,
    filter: LogFilter,
  ) {
    if (lo > hi) return;
    for (let position = 0; position < PERIOD; position += 1) {
      const matches = matchesContent(table(position), filter);
      if (matches) this.positions.push(position);
      this.before[position + 1] = (this.before[position] ?? 0) + (matches ? 1 : 0);
    }
  }

  /** From base up to before k (base <= k). */
  private matchesBelow(k: number): number {
    const offset = k - this.base;
    return Math.floor(offset / PERIOD) * this.positions.length + (this.before[offset % PERIOD] ?? 0);
  }

  /** Matches within [from, to] and the segment. */
  count(from: number, to: number): number {
    const low = Math.max(from, this.lo);
    const high = Math.min(to, this.hi);
    if (low > high || this.positions.length === 0) return 0;
    return this.matchesBelow(high + 1) - this.matchesBelow(low);
  }

  /** The index of the match of rank `rank` counted from the top (0 is the highest index). */
  indexFromTop(rank: number): number {
    const ordinal = this.matchesBelow(this.hi + 1) - 1 - rank;
    const perPeriod = this.positions.length;
    const position = this.positions[ordinal % perPeriod] ?? 0;
    return this.base + Math.floor(ordinal / perPeriod) * PERIOD + position;
  }

  contentAt(k: number): LogContent {
    // k may lie below base (a rotated pattern starts before entry 0): the remainder made non-negative.
    return this.table((((k - this.base) % PERIOD) + PERIOD) % PERIOD);
  }
}

export interface LogStreamSource {
  record: Pick<StoredRecord, "id" | "project" | "plugin" | "created_at" | "updated_at">;
  intervalMs: number;
  /** After the record's last change, when a fault selects it. */
  errorRatio: number | undefined;
  nowMs: number;
  /** Not only the last 24 hours: a counter's count. */
  sinceCreation?: boolean;
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, "0").slice(-digits);
}

/** Newest first, made one at a time on demand. */
export class SynthesizedLog {
  readonly count: number;
  private readonly segments: readonly Segment[];
  private readonly createdMs: number;

  constructor(
    private readonly source: LogStreamSource,
    filter: LogFilter,
  ) {
    const { record, intervalMs, nowMs } = source;
    this.createdMs = Date.parse(record.created_at);
    const firstAfter = (ms: number) => Math.floor((ms - this.createdMs) / intervalMs) + 1;
    let lo = source.sinceCreation === true ? 1 : Math.max(1, firstAfter(nowMs - LOG_WINDOW_MS));
    let hi = firstAfter(nowMs) - 1;
    if (filter.after !== undefined) lo = Math.max(lo, firstAfter(filter.after));
    if (filter.before !== undefined)
      hi = Math.min(hi, Math.ceil((filter.before - this.createdMs) / intervalMs) - 1);
    if (Number.isNaN(this.createdMs)) hi = lo - 1;

    // The normal pattern starts at a place of its own for each record, so configs do not log in step.
    const rotation = hash32(record.id) % PERIOD;
    const normalAt = (position: number) => NORMAL[position] ?? { type: "INFO", message: "" };
    const normalSegment = new Segment(lo, hi, -rotation, normalAt, filter);
    const updatedMs = Date.parse(record.updated_at);
    if (source.errorRatio === undefined || Number.isNaN(updatedMs)) {
      this.segments = [normalSegment];
    } else {
      const changed = firstAfter(updatedMs);
      const errorsPerPeriod = Math.round(source.errorRatio * PERIOD);
      const shift = changed + rotation;
      const faultAt = (position: number) =>
        isErrorPosition(position, errorsPerPeriod)
          ? (ERRORS[position] ?? { type: "ERROR", message: "" })
          : normalAt((position + shift) % PERIOD);
      this.segments = [
        new Segment(Math.max(lo, changed), hi, changed, faultAt, filter),
        new Segment(lo, Math.min(hi, changed - 1), -rotation, normalAt, filter),
      ];
    }
    this.count = this.segments.reduce((sum, segment) => sum + segment.count(segment.lo, segment.hi), 0);
  }

  /** 0 is the newest. */
  entryAt(rank: number): LogEntry {
    let remaining = rank;
    for (const segment of this.segments) {
      const inSegment = segment.count(segment.lo, segment.hi);
      if (remaining < inSegment) {
        const k = segment.indexFromTop(remaining);
        return this.entry(k, segment.contentAt(k));
      }
      remaining -= inSegment;
    }
    throw new RangeError(`log entry ${rank} of ${this.count}`);
  }

  /** Newer, or as new with a greater id. */
  countBefore(entry: LogEntry): number {
    const ms = Date.parse(entry.timestamp);
    const sinceCreation = ms - this.createdMs;
    const { intervalMs } = this.source;
    const newer = Math.floor(sinceCreation / intervalMs) + 1;
    let before = 0;
    for (const segment of this.segments) before += segment.count(newer, segment.hi);
    if (sinceCreation % intervalMs === 0) {
      const same = sinceCreation / intervalMs;
      // The entry made at that very instant, if it matches: it sorts before when its id is greater.
      const segment = this.segments.find((candidate) => candidate.count(same, same) > 0);
      if (segment && compareLogEntries(this.entry(same, segment.contentAt(same)), entry) < 0) before += 1;
    }
    return before;
  }

  private entry(k: number, content: LogContent): LogEntry {
    const { record } = this.source;
    const sequence = hex(k, 12);
    return {
      // A UUID (version 8: made here, not random) naming the record and the entry's place in its stream.
      id: `${sequence.slice(0, 8)}-${sequence.slice(8)}-8000-8000-${hex(record.id, 12)}`,
      team_id: record.project,
      plugin_id: record.plugin,
      plugin_config_id: record.id,
      timestamp: new Date(this.createdMs + k * this.source.intervalMs).toISOString(),
      source: "PLUGIN",
      type: content.type,
      message: content.message,
      instance_id: `00000000-0000-8000-8000-${hex(record.id, 12)}`,
    };
  }
}

/** Newest first, then by id, greatest first. */
export function compareLogEntries(a: LogEntry, b: LogEntry): number {
  return Date.parse(b.timestamp) - Date.parse(a.timestamp) || compareText(b.id, a.id);
}

/**
 * `stored` already filtered, in list order. Each stored entry's place in the merged list is counted,
 * not found by walking the stream.
 */
export function paginateLogs(
  stored: readonly LogEntry[],
  synthesized: SynthesizedLog | undefined,
  page: PageRequest,
  requestUrl: URL,
): Page<LogEntry> {
  if (synthesized === undefined || synthesized.count === 0) {
    return paginateCounted(stored.length, (start, end) => stored.slice(start, end), page, requestUrl);
  }
  const places = stored.map((entry, index) => index + synthesized.countBefore(entry));
  const slice = (start: number, end: number): LogEntry[] => {
    let storedBefore = 0;
    while (storedBefore < places.length && (places[storedBefore] ?? 0) < start) storedBefore += 1;
    const results: LogEntry[] = [];
    for (let place = start; place < end; place += 1) {
      const storedEntry = stored[storedBefore];
      if (storedEntry !== undefined && places[storedBefore] === place) {
        results.push(storedEntry);
        storedBefore += 1;
      } else {
        results.push(synthesized.entryAt(place - storedBefore));
      }
    }
    return results;
  };
  return paginateCounted(stored.length + synthesized.count, slice, page, requestUrl);
}

export class LogStream {
  private readonly intervalMs: number | undefined;

  constructor(
    ratePerMinute: number,
    private readonly faults: () => readonly LogErrorFault[],
    private readonly profile: ProfileBehaviour,
    private readonly now: () => number = Date.now,
  ) {
    // Whole milliseconds between entries (a rate of 7 logs every 8571 ms); none at a rate of 0.
    this.intervalMs =
      ratePerMinute > 0 ? Math.max(1, Math.round(60_000 / Math.min(ratePerMinute, MAX_LOG_RATE))) : undefined;
  }

  /** Undefined when the stream is off, the record disabled or deleted, or a frontend app (no logs). */
  of(
    record: StoredRecord,
    plugin: PluginData | undefined,
    filter: LogFilter,
    options: { sinceCreation?: boolean } = {},
  ): SynthesizedLog | undefined {
    if (this.intervalMs === undefined || !record.enabled || record.deleted || plugin?.frontendApp === true) {
      return undefined;
    }
    const { name, description } = shownText(record, plugin, this.profile);
    const text = { name: name ?? "", description: description ?? "" };
    const errorRatio = logErrorRatio(this.faults(), record, text);
    return new SynthesizedLog(
      { record, intervalMs: this.intervalMs, errorRatio, nowMs: this.now(), ...options },
      filter,
    );
  }
}
