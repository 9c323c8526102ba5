// The synthesized log stream, checked against the entries it makes written out one by one: counts,
// every filter, pages merged with stored entries, the ERROR share after a change, and pages that
// stay put while time passes.

import { describe, expect, it } from "vitest";
import {
  LOG_WINDOW_MS,
  type LogFilter,
  type LogStreamSource,
  paginateLogs,
  SynthesizedLog,
} from "../../src/emulator/log-stream.js";
import type { LogEntry } from "../../src/wire-types.js";
import { fc } from "../support/fast-check.js";

const NOW = Date.parse("2026-03-10T12:00:00.000Z");
const HOUR = 3_600_000;
const TYPES = ["DEBUG", "LOG", "INFO", "WARN", "ERROR"] as const;
const NO_FILTER: LogFilter = { types: new Set(), search: "", after: undefined, before: undefined };
const URL_OF_PAGE = new URL("http://emulator.test/api/projects/1/plugin_configs/7/logs/");

function source(fields: {
  createdMs: number;
  updatedMs?: number;
  intervalMs: number;
  errorRatio?: number;
  nowMs?: number;
}): LogStreamSource {
  return {
    record: {
      id: 7,
      project: 1,
      plugin: 2,
      created_at: new Date(fields.createdMs).toISOString(),
      updated_at: new Date(fields.updatedMs ?? fields.createdMs).toISOString(),
    },
    intervalMs: fields.intervalMs,
    errorRatio: fields.errorRatio,
    nowMs: fields.nowMs ?? NOW,
  };
}

/** Every entry of the stream, newest first, read one rank at a time. */
function materialize(log: SynthesizedLog): LogEntry[] {
  return Array.from({ length: log.count }, (_, rank) => log.entryAt(rank));
}

/** The filter as the endpoint documents it, written out independently of the emulator's. */
function referenceMatches(entry: LogEntry, filter: LogFilter): boolean {
  const ms = Date.parse(entry.timestamp);
  return (
    (filter.types.size === 0 || filter.types.has(entry.type)) &&
    entry.message.toLowerCase().includes(filter.search) &&
    (filter.after === undefined || ms > filter.after) &&
    (filter.before === undefined || ms < filter.before)
  );
}

function newestFirst(a: LogEntry, b: LogEntry): number {
  return Date.parse(b.timestamp) - Date.parse(a.timestamp) || b.id.localeCompare(a.id);
}

function storedEntry(ms: number, type: string, message: string, id: string): LogEntry {
  return {
    id,
    team_id: 1,
    plugin_id: 2,
    plugin_config_id: 7,
    timestamp: new Date(ms).toISOString(),
    source: "SYSTEM",
    type,
    message,
    instance_id: null,
  };
}

describe("the synthesized stream", () => {
  it("logs one entry per interval since creation, the last 24 hours only, newest first", () => {
    // Created 30 h ago, one entry a minute: the window holds the 24 h of it.
    const old = materialize(
      new SynthesizedLog(source({ createdMs: NOW - 30 * HOUR, intervalMs: 60_000 }), NO_FILTER),
    );
    expect(old).toHaveLength(24 * 60);
    const times = old.map((entry) => Date.parse(entry.timestamp));
    expect(times[0]).toBe(NOW);
    expect(times.every((ms, index) => index === 0 || (times[index - 1] ?? 0) - ms === 60_000)).toBe(true);
    expect(Math.min(...times)).toBeGreaterThan(NOW - LOG_WINDOW_MS);
    // Created 10 minutes and a few seconds ago: 10 entries, the first a minute after creation.
    const young = materialize(
      new SynthesizedLog(source({ createdMs: NOW - 10 * 60_000 - 5_000, intervalMs: 60_000 }), NO_FILTER),
    );
    expect(young.map((entry) => entry.timestamp).at(-1)).toBe(
      new Date(NOW - 9 * 60_000 - 5_000).toISOString(),
    );
    expect(young).toHaveLength(10);
  });

  it("is mostly INFO with some LOG and WARN, from the plugin, with distinct UUIDs, the same on every read", () => {
    const log = new SynthesizedLog(source({ createdMs: NOW - 2 * HOUR, intervalMs: 1_000 }), NO_FILTER);
    const entries = materialize(log);
    const share = (type: string) => entries.filter((entry) => entry.type === type).length / entries.length;
    expect(share("INFO")).toBeGreaterThan(0.7);
    expect(share("LOG")).toBeGreaterThan(0.03);
    expect(share("WARN")).toBeGreaterThan(0.01);
    expect(share("ERROR")).toBe(0);
    expect(new Set(entries.map((entry) => entry.source))).toEqual(new Set(["PLUGIN"]));
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
    for (const entry of entries.slice(0, 50)) {
      expect(entry.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(entry).toMatchObject({ team_id: 1, plugin_id: 2, plugin_config_id: 7 });
    }
    const again = new SynthesizedLog(source({ createdMs: NOW - 2 * HOUR, intervalMs: 1_000 }), NO_FILTER);
    expect(again.entryAt(1234)).toEqual(log.entryAt(1234));
  });

  it("counts and pages every filter, merged with stored entries, exactly as over the written-out list", () => {
    const filterArbitrary = fc.record({
      types: fc.subarray([...TYPES]),
      search: fc.constantFrom("", "events", "DESTINATION", "error", "purchase", "user-1", "no such text"),
      after: fc.option(fc.tuple(fc.integer({ min: -26 * 60, max: 60 }), fc.constantFrom(0, 0, 1, -1, 500)), {
        nil: undefined,
      }),
      before: fc.option(fc.tuple(fc.integer({ min: -26 * 60, max: 60 }), fc.constantFrom(0, 0, 1, -1, 500)), {
        nil: undefined,
      }),
    });
    const storedArbitrary = fc.array(
      fc.record({
        minutesAgo: fc.integer({ min: 0, max: 25 * 60 }),
        offsetMs: fc.constantFrom(0, 0, 1, 30_000),
        type: fc.constantFrom(...TYPES),
        id: fc.uuid(),
      }),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 * 60 }),
        fc.constantFrom(60_000, 120_000, 90_001),
        fc.option(
          fc.record({ ratio: fc.double({ min: 0, max: 1, noNaN: true }), minutesAgo: fc.nat(30 * 60) }),
          {
            nil: undefined,
          },
        ),
        filterArbitrary,
        storedArbitrary,
        fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(1.5)),
        fc.integer({ min: 1, max: 40 }),
        (createdMinutesAgo, intervalMs, fault, rawFilter, rawStored, offsetShare, limit) => {
          const createdMs = NOW - createdMinutesAgo * 60_000 - 7_000;
          const streamSource = source({
            createdMs,
            intervalMs,
            ...(fault === undefined
              ? {}
              : { errorRatio: fault.ratio, updatedMs: Math.max(createdMs, NOW - fault.minutesAgo * 60_000) }),
          });
          // Bounds fall on entries' own instants (where `after` and `before` exclude them) and next to them.
          const instant = (bound: [number, number] | undefined) =>
            bound === undefined
              ? undefined
              : createdMs +
                Math.round((bound[0] * 60_000 + NOW - createdMs) / intervalMs) * intervalMs +
                bound[1];
          const filter: LogFilter = {
            types: new Set(rawFilter.types),
            search: rawFilter.search.toLowerCase(),
            after: instant(rawFilter.after),
            before: instant(rawFilter.before),
          };
          const all = materialize(new SynthesizedLog(streamSource, NO_FILTER));
          // Stored entries land between synthesized ones, and on their very instants (ties by id).
          const stored = rawStored.map((raw) =>
            storedEntry(
              createdMs +
                Math.round((NOW - raw.minutesAgo * 60_000 - createdMs) / intervalMs) * intervalMs +
                raw.offsetMs,
              raw.type,
              `stored ${raw.type.toLowerCase()} entry about events`,
              raw.id,
            ),
          );
          const expected = [...all, ...stored]
            .filter((entry) => referenceMatches(entry, filter))
            .sort(newestFirst);
          // Pages anywhere in the list, and past its end.
          const offset = Math.floor(offsetShare * expected.length);
          const synthesized = new SynthesizedLog(streamSource, filter);
          const storedMatching = stored.filter((entry) => referenceMatches(entry, filter)).sort(newestFirst);
          const page = paginateLogs(storedMatching, synthesized, { offset, limit }, URL_OF_PAGE);
          expect(page.count).toBe(expected.length);
          expect(page.results).toEqual(expected.slice(offset, offset + limit));
          // Where each stored entry lands: the page that holds it, read on its own.
          for (const entry of storedMatching) {
            const place = expected.indexOf(entry);
            const onItsPage = paginateLogs(
              storedMatching,
              synthesized,
              { offset: place, limit: 1 },
              URL_OF_PAGE,
            );
            expect(onItsPage.results).toEqual([entry]);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("gives the count of the entries a reader pages through, page after page", () => {
    const log = new SynthesizedLog(
      source({ createdMs: NOW - 3 * HOUR, updatedMs: NOW - HOUR, intervalMs: 7_000, errorRatio: 0.3 }),
      { ...NO_FILTER, types: new Set(["ERROR", "WARN"]) },
    );
    const seen: LogEntry[] = [];
    for (let offset = 0; offset < log.count + 100; offset += 100) {
      seen.push(...paginateLogs([], log, { offset, limit: 100 }, URL_OF_PAGE).results);
    }
    expect(seen).toHaveLength(log.count);
    expect(new Set(seen.map((entry) => entry.id)).size).toBe(log.count);
  });
});

describe("the log-error fault", () => {
  it("logs the configured ERROR share after the last change, and none before it", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 20 * 60 }),
        fc.integer({ min: 0, max: 3 * 60 }),
        (ratio, changedMinutesAgo, readMinutesAfter) => {
          const updatedMs = NOW - changedMinutesAgo * 60_000 + 333;
          const streamSource = source({
            createdMs: NOW - 22 * HOUR,
            updatedMs,
            intervalMs: 30_000,
            errorRatio: ratio,
            nowMs: Math.min(NOW, updatedMs + readMinutesAfter * 60_000),
          });
          const entries = materialize(new SynthesizedLog(streamSource, NO_FILTER));
          const before = entries.filter((entry) => Date.parse(entry.timestamp) <= updatedMs);
          const after = entries.filter((entry) => Date.parse(entry.timestamp) > updatedMs);
          expect(before.filter((entry) => entry.type === "ERROR")).toEqual([]);
          // Spread evenly from the first entry on: every count of entries holds its share, rounded up.
          const errors = after.filter((entry) => entry.type === "ERROR").length;
          expect(errors).toBe(Math.ceil((after.length * Math.round(ratio * 1000)) / 1000));
          // What a rollout reads: the ERROR count since the change, and all entries since it.
          const errorCount = new SynthesizedLog(streamSource, {
            ...NO_FILTER,
            types: new Set(["ERROR"]),
            after: updatedMs,
          });
          const sinceCount = new SynthesizedLog(streamSource, { ...NO_FILTER, after: updatedMs });
          expect([errorCount.count, sinceCount.count]).toEqual([errors, after.length]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("time passing", () => {
  it("keeps the pages of a before-bounded query in place: a later read only loses the oldest", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 * 60 }),
        fc.integer({ min: 0, max: 5 * 60 }),
        fc.integer({ min: 0, max: 2 * 60 }),
        (beforeMinutesAgo, laterMinutes, offset) => {
          const streamSource = (nowMs: number) =>
            source({
              createdMs: NOW - 30 * HOUR,
              updatedMs: NOW - 2 * HOUR,
              intervalMs: 60_000,
              errorRatio: 0.2,
              nowMs,
            });
          const filter = { ...NO_FILTER, before: NOW - beforeMinutesAgo * 60_000 };
          const first = new SynthesizedLog(streamSource(NOW), filter);
          const later = new SynthesizedLog(streamSource(NOW + laterMinutes * 60_000), filter);
          expect(later.count).toBe(first.count - laterMinutes);
          const pageOf = (log: SynthesizedLog) =>
            paginateLogs([], log, { offset, limit: 25 }, URL_OF_PAGE).results;
          const [firstPage, laterPage] = [pageOf(first), pageOf(later)];
          expect(firstPage.slice(0, laterPage.length)).toEqual(laterPage);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("a long window", () => {
  it("counts an ERROR share over millions of entries and serves a deep page without making them", () => {
    // One entry a millisecond for a day: 86.4 million entries, of which the last hour's are faulty.
    const started = performance.now();
    const updatedMs = NOW - HOUR;
    const streamSource = source({
      createdMs: NOW - 2 * LOG_WINDOW_MS,
      updatedMs,
      intervalMs: 1,
      errorRatio: 0.25,
    });
    const errors = new SynthesizedLog(streamSource, {
      ...NO_FILTER,
      types: new Set(["ERROR"]),
      after: updatedMs,
    });
    expect(errors.count).toBe(HOUR / 4);
    const all = new SynthesizedLog(streamSource, NO_FILTER);
    expect(all.count).toBe(LOG_WINDOW_MS);
    const deep = paginateLogs([], all, { offset: 80_000_000, limit: 3 }, URL_OF_PAGE);
    expect(deep.results.map((entry) => entry.timestamp)).toEqual(
      [80_000_000, 80_000_001, 80_000_002].map((offset) => new Date(NOW - offset).toISOString()),
    );
    // Writing 86 million entries out would take minutes; counting them takes milliseconds.
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
