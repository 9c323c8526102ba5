// Durations as people read them: a bake, a wait, a time left.

import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../src/duration.js";

describe("a duration in words", () => {
  it.each([
    [0, "0s"],
    [250, "250ms"],
    [45_000, "45s"],
    [600_000, "10m"],
    [5_400_000, "1h30m"],
    [2_592_000_000, "30d"],
  ])("%d ms reads %s", (ms, words) => {
    expect(formatDuration(ms)).toBe(words);
  });

  it("reads back as the same length for each whole second", () => {
    for (const ms of [0, 1000, 61_000, 3_600_000, 90_061_000])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});
