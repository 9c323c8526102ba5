// How `pcsync logs` reads --type (or --level) and prints entries.

import { describe, expect, it } from "vitest";
import type { LogEntry } from "../../src/api/index.js";
import { formatLogEntry, parseLogTypes } from "../../src/cli/commands/logs.js";
import { InputError } from "../../src/input-error.js";

function entry(fields: Partial<LogEntry> = {}): LogEntry {
  return {
    id: "a",
    team_id: 1,
    plugin_id: 1,
    plugin_config_id: 1,
    timestamp: "2024-06-01T12:00:00.000Z",
    source: "PLUGIN",
    type: "WARN",
    message: "disk almost full",
    instance_id: null,
    ...fields,
  };
}

describe("parseLogTypes", () => {
  it("accepts any case, repeated and comma-separated, without duplicates", () => {
    expect(parseLogTypes(["warn", "Error,info", "WARN"])).toEqual(["WARN", "ERROR", "INFO"]);
    expect(parseLogTypes([])).toEqual([]);
  });

  it("refuses an unknown type, listing the valid ones", () => {
    expect(() => parseLogTypes(["warn", "fatal"])).toThrow(InputError);
    expect(() => parseLogTypes(["fatal"])).toThrow(
      '--type (or --level) must be one of DEBUG, LOG, INFO, WARN, ERROR (any case), not "fatal"',
    );
  });
});

describe("formatLogEntry", () => {
  it("prints time, type, source and message in aligned columns", () => {
    expect(formatLogEntry(entry(), "text", false)).toBe(
      "2024-06-01T12:00:00.000Z WARN  PLUGIN  disk almost full\n",
    );
    expect(formatLogEntry(entry({ type: "ERROR", source: "CONSOLE" }), "text", false)).toBe(
      "2024-06-01T12:00:00.000Z ERROR CONSOLE disk almost full\n",
    );
  });

  it("colours the type only when asked", () => {
    expect(formatLogEntry(entry({ type: "ERROR" }), "text", true)).toContain("\u001b[31mERROR\u001b[39m");
    expect(formatLogEntry(entry({ type: "LOG" }), "text", true)).not.toContain("\u001b[");
  });

  it("keeps terminal control sequences in messages from reaching the terminal", () => {
    const text = formatLogEntry(entry({ message: "a\u001b[2J\u001b]0;owned\u0007b\r\nnext" }), "text", true);
    expect(text).not.toContain("\u001b[2J");
    expect(text).not.toContain("\u0007");
    // A second line of a message is indented, so every line at column 0 starts an entry.
    expect(text.split("\n")[1]).toBe("    next");
  });

  it("prints one JSON object per line in json format", () => {
    const line = formatLogEntry(entry({ message: "two\nlines" }), "json", false);
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toContain("\n");
    expect(JSON.parse(line)).toEqual(entry({ message: "two\nlines" }));
  });
});
