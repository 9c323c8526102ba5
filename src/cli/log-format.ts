// How `pcsync logs` prints an entry: a text line coloured by type, or one JSON object per line.

import type { LogEntry } from "../api/index.js";
import { InputError } from "../input-error.js";
import { neutraliseInline, neutraliseJson, neutraliseLines } from "../neutralise-server-text.js";
import { createPaint, type Style } from "../render/colour.js";
import type { TextOrJson } from "./shared-options.js";

export const LOG_TYPES = ["DEBUG", "LOG", "INFO", "WARN", "ERROR"] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** `--level` values, case-insensitive and comma-separable (`--level warn,error`), deduplicated. */
export function parseLogTypes(values: readonly string[]): LogType[] {
  const types = new Set<LogType>();
  for (const value of values.flatMap((item) => item.split(","))) {
    const type = value.trim().toUpperCase();
    if (!(LOG_TYPES as readonly string[]).includes(type)) {
      throw new InputError(
        "usage",
        `--level must be one of ${LOG_TYPES.join(", ")} (any case), not "${value.trim()}"`,
      );
    }
    types.add(type as LogType);
  }
  return [...types];
}

const TYPE_STYLES: Readonly<Partial<Record<string, Style>>> = {
  DEBUG: "dim",
  INFO: "cyan",
  WARN: "yellow",
  ERROR: "red",
};
// bounded-spread: the five log types.
const TYPE_WIDTH = Math.max(...LOG_TYPES.map((type) => type.length));
// The longest source the service sends (SYSTEM, PLUGIN, CONSOLE).
const SOURCE_WIDTH = 7;
// Messages come from plugins: made safe as all server text is (neutralise-server-text.ts), so they cannot
// rewrite the terminal nor start a line a CI runner reads as a command.
export function formatLogEntry(entry: LogEntry, format: TextOrJson, colour: boolean): string {
  if (format === "json") return `${neutraliseJson(JSON.stringify(entry))}\n`;
  const type = neutraliseInline(entry.type);
  const shownType = type.padEnd(TYPE_WIDTH);
  const style = TYPE_STYLES[type];
  const coloured = style === undefined ? shownType : createPaint(colour)(style, shownType);
  // Continuation lines are indented so that every printed line starting at column 0 is an entry.
  const message = neutraliseLines(entry.message).join("\n    ");
  const source = neutraliseInline(entry.source).padEnd(SOURCE_WIDTH);
  return `${neutraliseInline(entry.timestamp)} ${coloured} ${source} ${message}\n`;
}
