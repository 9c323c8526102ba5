// Heal with `rollout:` in the manifest: a family is healed only back to a manifest it was seen in
// sync with for the rollout's bake and the settle time in a row; a family whose manifest is new to
// the watcher (changed, never seen in sync, or not for that long) is held, and a family's place in
// the files is not a change.

import { describe, expect, it } from "vitest";
import type { DesiredFamily, DesiredState, DriftMode } from "../../src/manifest/index.js";
import type { PlannedChange } from "../../src/plan/types.js";
import type { FamilyFinding } from "../../src/watch/cycle-log.js";
import { HELD_FOR_ROLLOUT, RolloutHold } from "../../src/watch/rollout-hold.js";

const ROLLOUT = { waves: [], bakeMs: 0 } as unknown as NonNullable<DesiredState["rollout"]>;
const HEAL = new Map<string, DriftMode>([["1\u0000plugin_configs", "heal"]]);

function family(description: string, line = 5): DesiredFamily {
  return {
    project: "1",
    family: "plugin_configs",
    prune: false,
    explicitOrder: false,
    source: { file: "pcsync.yaml", line, col: 5 },
    configs: [
      {
        fields: { name: "GeoIP", plugin: 1, description, order: 0 },
        source: { file: "pcsync.yaml", line: line + 2, col: 9 },
        fieldSources: {},
      },
    ],
  };
}

const drift: PlannedChange = {
  action: "update",
  project: "1",
  family: "plugin_configs",
  name: "GeoIP",
  id: 5,
  fields: { enabled: { from: false, to: true } },
  source: "pcsync.yaml:7",
};
const plan = { changes: [drift], reorders: [] };

function finding(inSync: boolean): FamilyFinding {
  return { project: "1", family: "plugin_configs", changes: inSync ? [] : [drift], reorder: undefined };
}

describe("RolloutHold", () => {
  it("holds nothing without rollout:, whatever it has seen", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    expect(hold.held(plan, { families: [family("v1")] }, HEAL)).toEqual([]);
  });

  it("holds a family it has not seen in sync, and says why, pointing at the family", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    expect(hold.held(plan, { families: [family("v1")], rollout: ROLLOUT }, HEAL)).toEqual([
      { project: "1", family: "plugin_configs", source: "pcsync.yaml:5", message: HELD_FOR_ROLLOUT },
    ]);
  });

  it("heals drift back to the manifest last seen in sync, even when lines moved in the file", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    hold.observe([finding(true)], { families: [family("v1")] });
    expect(hold.held(plan, { families: [family("v1", 40)], rollout: ROLLOUT }, HEAL)).toEqual([]);
  });

  it("holds a family whose manifest changed since it was in sync, until it is seen in sync with the new one", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    hold.observe([finding(true)], { families: [family("v1")] });
    const changed = { families: [family("v2")], rollout: ROLLOUT };
    expect(hold.held(plan, changed, HEAL)).toHaveLength(1);
    // Still drifting (held): nothing is learnt.
    hold.observe([{ ...finding(false), refused: [HELD_FOR_ROLLOUT] }], changed);
    expect(hold.held(plan, changed, HEAL)).toHaveLength(1);
    // apply rolled it out: a cycle finds it in sync with v2, whose drift is healed from now on.
    expect(hold.held({ changes: [], reorders: [] }, changed, HEAL)).toEqual([]);
    hold.observe([finding(true)], changed);
    expect(hold.held(plan, changed, HEAL)).toEqual([]);
  });

  it("an owner change is a change; a family in sync, in warn mode or without drift is never held", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    hold.observe([finding(true)], { families: [family("v1")] });
    const owned = {
      families: [family("v1")],
      rollout: ROLLOUT,
      owner: { name: "team-a", source: family("v1").source },
    };
    expect(hold.held(plan, owned, HEAL)).toHaveLength(1);
    expect(hold.held({ changes: [], reorders: [] }, owned, HEAL)).toEqual([]);
    expect(hold.held(plan, owned, new Map([["1\u0000plugin_configs", "warn"]]))).toEqual([]);
  });

  it("learns nothing while a change is part-way out: a wave rolled back is not healed back to the change", () => {
    const hold = new RolloutHold({ settleMs: 0 });
    const project = (id: string, description: string) => ({ ...family(description), project: id });
    const heal = new Map<string, DriftMode>([
      ["1\u0000plugin_configs", "heal"],
      ["2\u0000plugin_configs", "heal"],
    ]);
    const inSync = (id: string) => ({ ...finding(true), project: id });
    const drifting = (id: string) => ({ ...finding(false), project: id });
    const driftIn = (id: string) => ({ changes: [{ ...drift, project: id }], reorders: [] });
    hold.observe([inSync("1"), inSync("2")], { families: [project("1", "v1"), project("2", "v1")] });
    const v2 = { families: [project("1", "v2"), project("2", "v2")], rollout: ROLLOUT };
    // Wave 1 wrote project 1; project 2 waits for wave 2 and is held.
    expect(hold.held(driftIn("2"), v2, heal).map((item) => item.project)).toEqual(["2"]);
    hold.observe([inSync("1"), { ...drifting("2"), refused: [HELD_FOR_ROLLOUT] }], v2);
    // The wave failed and was rolled back: project 1 is at v1 again, which is not healed to v2.
    expect(hold.held(driftIn("1"), v2, heal).map((item) => item.project)).toEqual(["1"]);
  });

  describe("learns a version only once it has stayed in sync for the bake and the settle time", () => {
    const BAKE_MS = 10 * 60_000;
    const SETTLE_MS = 15 * 60_000;
    const baked = { waves: [], bakeMs: BAKE_MS } as unknown as NonNullable<DesiredState["rollout"]>;
    const at = (description: string) => ({ families: [family(description)], rollout: baked });
    const inSync = { changes: [], reorders: [] };
    function clocked() {
      const clock = { now: 0 };
      return { clock, hold: new RolloutHold({ settleMs: SETTLE_MS, now: () => clock.now }) };
    }
    /** One cycle of the watcher: drift (held or healed), then what it found. */
    function cycle(hold: RolloutHold, version: ReturnType<typeof at>, drifting: boolean) {
      const held = hold.held(drifting ? plan : inSync, version, HEAL);
      hold.observe(
        [held.length > 0 ? { ...finding(false), refused: [HELD_FOR_ROLLOUT] } : finding(true)],
        version,
      );
      return held.length > 0;
    }

    it("a version in sync for less than bake + settle is not healed back to; at that, it is", () => {
      const { clock, hold } = clocked();
      expect(cycle(hold, at("v1"), false)).toBe(false);
      clock.now = BAKE_MS + SETTLE_MS - 1;
      expect(cycle(hold, at("v1"), false)).toBe(false);
      expect(hold.held(plan, at("v1"), HEAL)).toHaveLength(1);
      clock.now = BAKE_MS + SETTLE_MS;
      expect(cycle(hold, at("v1"), false)).toBe(false);
      expect(hold.held(plan, at("v1"), HEAL)).toEqual([]);
    });

    it("the only wave of a change, in sync while it bakes and then rolled back, is not healed back to the change", () => {
      const { clock, hold } = clocked();
      cycle(hold, at("v1"), false);
      clock.now = BAKE_MS + SETTLE_MS;
      cycle(hold, at("v1"), false);
      // apply writes v2 everywhere at once (one wave): every cycle of its bake finds it in sync.
      for (let minute = 0; minute <= 12; minute++) {
        clock.now = BAKE_MS + SETTLE_MS + minute * 60_000;
        expect(cycle(hold, at("v2"), false)).toBe(false);
      }
      // Judged failing and rolled back: v1 again, which is drift from v2, and held, not healed.
      clock.now += 60_000;
      expect(cycle(hold, at("v2"), true)).toBe(true);
      clock.now += 60 * 60_000;
      expect(cycle(hold, at("v2"), true)).toBe(true);
    });

    it("a bake shortened in the manifest meanwhile does not shorten the wait: a rollout keeps the bake it started with", () => {
      const { clock, hold } = clocked();
      const short = { families: [family("v2")], rollout: { ...baked, bakeMs: 1_000 } } as ReturnType<
        typeof at
      >;
      cycle(hold, at("v2"), false);
      clock.now = 1_000 + SETTLE_MS;
      cycle(hold, short, false);
      expect(hold.held(plan, short, HEAL)).toHaveLength(1);
      clock.now = BAKE_MS + SETTLE_MS;
      cycle(hold, short, false);
      expect(hold.held(plan, short, HEAL)).toEqual([]);
    });

    it("a cycle that holds a family starts the count again, and so does a cycle out of sync", () => {
      const { clock, hold } = clocked();
      cycle(hold, at("v2"), false);
      clock.now = BAKE_MS;
      // Held (a rollout under way elsewhere in the fleet): nothing counts from before it.
      expect(cycle(hold, at("v2"), true)).toBe(true);
      clock.now = BAKE_MS + 1;
      cycle(hold, at("v2"), false);
      clock.now = BAKE_MS + SETTLE_MS;
      cycle(hold, at("v2"), false);
      expect(hold.held(plan, at("v2"), HEAL)).toHaveLength(1);
      clock.now = 2 * BAKE_MS + SETTLE_MS + 1;
      cycle(hold, at("v2"), false);
      expect(hold.held(plan, at("v2"), HEAL)).toEqual([]);
    });
  });
});
