// The cursor of `pcsync logs --follow`: every entry printed once, oldest first, late ones included.

import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../src/api/index.js";
import { LogFollowCursor } from "../../src/cli/log-follow.js";

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
});
