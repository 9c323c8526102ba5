// Sharding projects among workers: every project lands in exactly one shard, the assignment
// never moves, and bad --shard values say how to write a good one.

import { describe, expect, it } from "vitest";
import { InputError } from "../../src/input-error.js";
import { parseShard, selectShard, shardOf } from "../../src/plan/shard.js";
import { fc } from "../support/fast-check.js";

const projectIds = fc.uniqueArray(
  fc.oneof(
    fc.nat({ max: 1_000_000 }).map(String),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  ),
  { maxLength: 60 },
);

describe("selectShard", () => {
  it("splits any set of projects into N complete, disjoint shards", () => {
    fc.assert(
      fc.property(projectIds, fc.integer({ min: 1, max: 12 }), (ids, count) => {
        const shards = Array.from({ length: count }, (_, index) =>
          selectShard(ids, { index: index + 1, count }),
        );
        const all = shards.flat();
        expect(all).toHaveLength(ids.length);
        expect(new Set(all)).toEqual(new Set(ids));
        for (const [index, shard] of shards.entries()) {
          for (const id of shard) expect(shardOf(id, count)).toBe(index);
        }
      }),
    );
  });

  it("keeps a project in its shard whatever else is in the manifest", () => {
    fc.assert(
      fc.property(projectIds, projectIds, fc.integer({ min: 1, max: 12 }), (ids, others, count) => {
        const shard = { index: 1, count };
        const alone = selectShard(ids, shard);
        const together = selectShard([...others, ...ids], shard);
        for (const id of alone) expect(together).toContain(id);
      }),
    );
  });

  it("selects items by the project they belong to, keeping a project's families together", () => {
    const families = [
      { project: "1", family: "plugin_configs" },
      { project: "1", family: "pipeline_frontend_apps_configs" },
      { project: "2", family: "plugin_configs" },
    ];
    const byProject = (item: { project: string }) => item.project;
    const first = selectShard(families, { index: shardOf("1", 2) + 1, count: 2 }, byProject);
    expect(first.filter((item) => item.project === "1")).toHaveLength(2);
  });
});

describe("shardOf", () => {
  it("assigns known ids to the same shards on every run and machine", () => {
    // 32-bit FNV-1a (e.g. "1" hashes to 0x340ca71c); a change here moves users' projects between workers.
    const ids = ["1", "2", "3", "42", "1000", "@current", "projet-é"];
    expect(ids.map((id) => shardOf(id, 4))).toEqual([0, 1, 2, 3, 0, 0, 2]);
    expect(ids.map((id) => shardOf(id, 7))).toEqual([2, 3, 5, 6, 3, 1, 2]);
    expect(ids.map((id) => shardOf(id, 1))).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });
});

describe("parseShard", () => {
  it("reads K/N with K counting from 1", () => {
    expect(parseShard("1/4")).toEqual({ index: 1, count: 4 });
    expect(parseShard(" 4 / 4 ")).toEqual({ index: 4, count: 4 });
    expect(parseShard("1/1")).toEqual({ index: 1, count: 1 });
  });

  it.each([
    ["", /must be K\/N/],
    ["3", /must be K\/N/],
    ["1/2/3", /must be K\/N/],
    ["-1/4", /must be K\/N/],
    ["1.5/4", /must be K\/N/],
    ["a/b", /must be K\/N/],
    ["0/4", /K must be between 1 and 4 \(shards count from 1/],
    ["5/4", /K must be between 1 and 4/],
    ["1/0", /N must be between 1 and/],
    ["1/99999999999999999999", /N must be between 1 and/],
  ])("refuses %j with a message that says how to fix it", (text, message) => {
    expect(() => parseShard(text)).toThrow(InputError);
    expect(() => parseShard(text)).toThrow(message);
  });
});
