// Heal's memory of records something else keeps changing back, on a clock the test moves: healed in
// 3 cycles in a row is flapping; it is left alone for a backoff that doubles (up to an hour) each
// time it flaps again, and forgotten once it stays put.

import { describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../src/plan/types.js";
import type { FamilyFinding } from "../../src/watch/cycle-log.js";
import { FlapTracker, MAX_FLAP_BACKOFF_MS } from "../../src/watch/heal-flapping.js";
import { EventTracker } from "../../src/watch/watch-events.js";

function update(id: number): PlannedChange {
  return {
    action: "update",
    project: "1",
    family: "plugin_configs",
    name: `Config ${id}`,
    id,
    fields: { enabled: { from: false, to: true } },
    source: "pcsync.yaml:7",
  };
}

function planOf(changes: PlannedChange[]): Plan {
  return {
    format: "pcsync-plan",
    version: 2,
    summary: { create: 0, update: changes.length, delete: 0, reorder: 0 },
    changes,
    reorders: [],
    families: [],
    fingerprints: {},
    guards: [],
  };
}

/**
 * One heal cycle of one family: what drifts, heal applies what the tracker lets through (or, with
 * `heals: false`, nothing: warn mode, a guard); returns the finding the cycle reports.
 */
function cycle(tracker: FlapTracker, drifting: PlannedChange[], heals = true): FamilyFinding {
  const { plan, held } = tracker.hold(planOf(drifting));
  const healed = heals ? plan.changes : [];
  const left = heals ? [] : plan.changes;
  const finding: FamilyFinding = {
    project: "1",
    family: "plugin_configs",
    changes: left,
    reorder: undefined,
    ...(healed.length > 0 ? { healed: { changes: healed, reorder: undefined } } : {}),
  };
  const [result] = tracker.observe([finding], held);
  if (result === undefined) throw new Error("no finding");
  return result;
}

const INTERVAL = 1_000;

function setUp() {
  let now = 0;
  const tracker = new FlapTracker({ firstBackoffMs: 2 * INTERVAL, now: () => now });
  return {
    tracker,
    /** A cycle an interval after the last one. */
    next: (drifting: PlannedChange[], heals = true) => {
      now += INTERVAL;
      return cycle(tracker, drifting, heals);
    },
  };
}

describe("FlapTracker", () => {
  it("calls a record healed in 3 cycles in a row flapping, and leaves it alone for two intervals", () => {
    const { next } = setUp();
    expect(next([update(1)]).flapping).toBeUndefined();
    expect(next([update(1)]).flapping).toBeUndefined();
    const third = next([update(1)]);
    expect(third.healed?.changes).toHaveLength(1);
    expect(third.flapping).toEqual({ records: 1, started: [{ change: update(1), backoffMs: 2 * INTERVAL }] });
    // Left alone: still drift, not healed, no new event.
    const alone = next([update(1)]);
    expect([alone.healed, alone.changes, alone.flapping]).toEqual([
      undefined,
      [update(1)],
      { records: 1, started: [] },
    ]);
    // Its backoff over, it is healed once more; put back again, it flaps again: twice as long.
    const probe = next([update(1)]);
    expect([probe.healed?.changes, probe.flapping?.started]).toEqual([[update(1)], []]);
    const again = next([update(1)]);
    expect(again.flapping?.started).toEqual([{ change: update(1), backoffMs: 4 * INTERVAL }]);
  });

  it("forgets a record that stays put: its count starts again", () => {
    const { next } = setUp();
    for (let index = 0; index < 3; index++) next([update(1)]);
    next([update(1)]);
    const probe = next([update(1)]);
    expect(probe.healed?.changes).toEqual([update(1)]);
    // The heal held: nothing drifts, nothing is flapping any more.
    expect(next([]).flapping).toBeUndefined();
    expect(next([update(1)]).flapping).toBeUndefined();
    expect(next([update(1)]).flapping).toBeUndefined();
    expect(next([update(1)]).flapping?.started).toEqual([{ change: update(1), backoffMs: 2 * INTERVAL }]);
  });

  it("a cycle that does not heal it breaks the row; other records are not held back", () => {
    const { next } = setUp();
    next([update(1)]);
    next([update(1)]);
    next([update(1)], false);
    expect(next([update(1)]).flapping).toBeUndefined();
    expect(next([update(1)]).flapping).toBeUndefined();
    const third = next([update(1), update(2)]);
    expect(third.flapping?.started.map((item) => item.change.id)).toEqual([1]);
    const alone = next([update(1), update(2)]);
    expect(alone.healed?.changes).toEqual([update(2)]);
    expect(alone.changes).toEqual([update(1)]);
  });

  it("leaves a flapping record alone for at least one cycle, however long cycles take", () => {
    let now = 0;
    const tracker = new FlapTracker({ firstBackoffMs: 2 * INTERVAL, now: () => now });
    // Each cycle takes five intervals: the backoff is over before the next one starts.
    const slow = (drifting: PlannedChange[]) => {
      now += 5 * INTERVAL;
      return cycle(tracker, drifting);
    };
    for (let index = 0; index < 3; index++) slow([update(1)]);
    const alone = slow([update(1)]);
    expect([alone.healed, alone.changes]).toEqual([undefined, [update(1)]]);
    expect(slow([update(1)]).healed?.changes).toEqual([update(1)]);
  });

  it("doubles the backoff up to an hour", () => {
    const { next } = setUp();
    const backoffs: number[] = [];
    for (let index = 0; index < 50_000 && backoffs.length < 14; index++) {
      const started = next([update(1)]).flapping?.started ?? [];
      for (const item of started) backoffs.push(item.backoffMs);
    }
    expect(backoffs.slice(0, 4)).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(Math.max(...backoffs)).toBe(MAX_FLAP_BACKOFF_MS);
    expect(backoffs.at(-1)).toBe(MAX_FLAP_BACKOFF_MS);
  });

  it("sends one heal_flapping event when a record starts to flap, naming it and its backoff", () => {
    const { next } = setUp();
    const events = new EventTracker();
    const sent: string[] = [];
    for (let index = 0; index < 4; index++) {
      for (const event of events.observeCycle([next([update(1)])], `t${index}`)) sent.push(event.event);
    }
    expect(sent).toEqual(["healed", "healed", "healed", "heal_flapping", "drift_opened"]);
    const [flapping] = events
      .observeCycle(
        [
          {
            ...next([update(1)]),
            flapping: { records: 1, started: [{ change: update(1), backoffMs: 2000 }] },
          },
        ],
        "t",
      )
      .filter((event) => event.event === "heal_flapping");
    expect(flapping?.message).toContain('"Config 1" (id 1): left alone for 2 s');
  });
});
