// The cursor of `pcsync logs --follow`: every entry printed once, oldest first, late ones included.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../src/api/index.js";
import { FOLLOW_CLOCK_SKEW_MS, LogFollowCursor } from "../../src/run/log-follow.js";

const BASE = Date.parse("2024-06-01T12:00:00.000Z");

function entry(id: string, secondsAfterBase: number): LogEntry {
  return {
    id,
    team_id: 1,
    plugin_id: 1,
    plugin_config_id: 1,
    timestamp: new Date(BASE + secondsAfterBase * 1000).toISOString(),
    source: "SYSTEM",
    type: "INFO",
    message: id,
    instance_id: null,
  };
}

/** Newest first, as the service lists them. */
function listed(...entries: LogEntry[]): LogEntry[] {
  return [...entries].sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp));
}

const ids = (entries: LogEntry[]) => entries.map((item) => item.id);

describe("LogFollowCursor", () => {
  it("prints only entries not printed before, oldest first", () => {
    const backlog = [entry("a", 0), entry("b", 1)];
    const cursor = new LogFollowCursor(listed(...backlog), { complete: true, overlapMs: 5000 });
    expect(cursor.nextAfter()?.toISOString()).toBe(new Date(BASE + 1000 - 5000 - 1).toISOString());
    expect(ids(cursor.accept(listed(...backlog, entry("c", 2), entry("d", 3))))).toEqual(["c", "d"]);
    expect(ids(cursor.accept(listed(...backlog, entry("c", 2), entry("d", 3))))).toEqual([]);
    expect(ids(cursor.accept(listed(entry("d", 3), entry("e", 3))))).toEqual(["e"]);
  });

  it("prints an entry stored late with an older time, within the overlap", () => {
    const cursor = new LogFollowCursor([entry("a", 10)], { complete: true, overlapMs: 5000 });
    expect(ids(cursor.accept(listed(entry("a", 10), entry("late", 8))))).toEqual(["late"]);
  });

  it("does not print older entries that --limit left out of the backlog", () => {
    const cursor = new LogFollowCursor([entry("newest", 10)], { complete: false, overlapMs: 5000 });
    expect(cursor.nextAfter()?.getTime()).toBe(BASE + 10_000 - 1);
    expect(ids(cursor.accept(listed(entry("cut", 9), entry("newest", 10), entry("new", 11))))).toEqual([
      "new",
    ]);
  });

  it("starts from --since when nothing was printed, and from the start without it", () => {
    const since = new Date(BASE);
    const cursor = new LogFollowCursor([], { complete: true, since });
    expect(cursor.nextAfter()?.getTime()).toBe(BASE);
    expect(ids(cursor.accept(listed(entry("before", -1), entry("after", 1))))).toEqual(["after"]);
    expect(new LogFollowCursor([], { complete: true }).nextAfter()).toBeUndefined();
  });

  it("moves its lower bound forward, so a long run asks only for recent entries", () => {
    const cursor = new LogFollowCursor([], { complete: true, overlapMs: 1000 });
    for (let second = 0; second < 100; second++) {
      expect(ids(cursor.accept([entry(`e${second}`, second)]))).toEqual([`e${second}`]);
    }
    expect(cursor.nextAfter()?.getTime()).toBe(BASE + 99_000 - 1000 - 1);
    // Entries at or before the lower bound are forgotten, yet never come back from the service.
    expect(ids(cursor.accept([entry("e99", 99), entry("e98", 98)]))).toEqual([]);
  });

  describe("an entry stamped in the future", () => {
    const now = () => BASE;
    const HOUR = 3600;

    it("is printed, never stops later entries, and is warned of once", () => {
      const cursor = new LogFollowCursor([entry("a", -5)], { complete: true, overlapMs: 5000, now });
      expect(cursor.takeWarning()).toBeUndefined();
      expect(ids(cursor.accept(listed(entry("a", -5), entry("ahead", HOUR))))).toEqual(["ahead"]);
      expect(cursor.takeWarning()).toMatch(
        /^the entry of 2024-06-01T13:00:00.000Z is stamped 60 min ahead of this machine's clock/,
      );
      expect(cursor.nextAfter()?.getTime()).toBeLessThanOrEqual(BASE + FOLLOW_CLOCK_SKEW_MS);
      // Entries stamped now come after it, and are printed; the future one is not printed again.
      expect(ids(cursor.accept(listed(entry("ahead", HOUR), entry("b", 1), entry("far", 2 * HOUR))))).toEqual(
        ["b", "far"],
      );
      expect(cursor.takeWarning()).toBeUndefined();
      expect(ids(cursor.accept(listed(entry("ahead", HOUR), entry("far", 2 * HOUR), entry("c", 2))))).toEqual(
        ["c"],
      );
    });

    it("in a backlog cut by --limit, does not hold back later entries", () => {
      const cursor = new LogFollowCursor([entry("ahead", HOUR), entry("a", -5)], {
        complete: false,
        overlapMs: 5000,
        now,
      });
      expect(cursor.takeWarning()).toMatch(/60 min ahead/);
      expect(ids(cursor.accept(listed(entry("ahead", HOUR), entry("b", 1))))).toEqual(["b"]);
    });

    it("a skew within a few seconds moves the cursor as any entry does, without a warning", () => {
      const cursor = new LogFollowCursor([], { complete: true, overlapMs: 5000, now });
      expect(ids(cursor.accept(listed(entry("a", 3))))).toEqual(["a"]);
      expect(cursor.takeWarning()).toBeUndefined();
      expect(cursor.nextAfter()?.getTime()).toBe(BASE + 3000 - 5000 - 1);
    });

    it("the next poll never asks from later than now plus the skew, whatever the entries' times", () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(fc.integer({ min: -HOUR, max: 1000 * HOUR }), { maxLength: 5 }), {
            maxLength: 5,
          }),
          fc.boolean(),
          (polls, complete) => {
            let next = 0;
            const make = (seconds: number) => entry(`e${next++}`, seconds);
            const [first = [], ...rest] = polls;
            const cursor = new LogFollowCursor(listed(...first.map(make)), {
              complete,
              overlapMs: 5000,
              now,
            });
            for (const poll of rest) {
              cursor.accept(listed(...poll.map(make)));
              expect(cursor.nextAfter()?.getTime() ?? 0).toBeLessThanOrEqual(BASE + FOLLOW_CLOCK_SKEW_MS);
            }
            // An entry stamped at the skew's end is always printed.
            expect(ids(cursor.accept([entry("now", FOLLOW_CLOCK_SKEW_MS / 1000)]))).toEqual(["now"]);
          },
        ),
      );
    });
  });
});
