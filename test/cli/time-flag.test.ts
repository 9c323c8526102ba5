// --since/--until parsing: ISO-8601 times and durations back from now.

import { describe, expect, it } from "vitest";
import { parseTimeFlag } from "../../src/cli/commands/logs.js";
import { parseDuration } from "../../src/duration.js";
import { InputError } from "../../src/input-error.js";

const NOW = Date.parse("2024-06-01T12:00:00.000Z");

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["15m", 900_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1w", 604_800_000],
    ["500ms", 500],
    ["1h30m", 5_400_000],
    [" 2H ", 7_200_000],
  ])("%s is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "15", "m", "1.5h", "-2h", "2 h", "2y", "h2", "1h 30m", `${"9".repeat(20)}d`])(
    "%j is not a duration",
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

describe("parseTimeFlag", () => {
  it("reads a duration as that long before now", () => {
    expect(parseTimeFlag("2h", "--since", NOW).toISOString()).toBe("2024-06-01T10:00:00.000Z");
    expect(parseTimeFlag("1d", "--since", NOW).toISOString()).toBe("2024-05-31T12:00:00.000Z");
  });

  it("reads ISO-8601 times, with or without time and offset", () => {
    expect(parseTimeFlag("2024-05-01T08:30:00Z", "--since", NOW).toISOString()).toBe(
      "2024-05-01T08:30:00.000Z",
    );
    expect(parseTimeFlag("2024-05-01T08:30:00+02:00", "--since", NOW).toISOString()).toBe(
      "2024-05-01T06:30:00.000Z",
    );
    expect(parseTimeFlag("2024-05-01", "--until", NOW).toISOString()).toBe("2024-05-01T00:00:00.000Z");
    expect(parseTimeFlag("2024-05-01T08:30:00.123Z", "--since", NOW).getTime()).toBe(
      Date.parse("2024-05-01T08:30:00.123Z"),
    );
  });

  it.each(["yesterday", "15", "2024-13-45", "1717243200", "2024/06/01", "now"])(
    "refuses %j with a message naming the flag and the accepted forms",
    (value) => {
      const parse = () => parseTimeFlag(value, "--since", NOW);
      expect(parse).toThrow(InputError);
      expect(parse).toThrow(
        /^--since must be an ISO-8601 time .* or a duration ago \(e\.g\. 30s, 15m, 2h, 1d/,
      );
    },
  );
});
