// Time flags of `pcsync logs`: an ISO-8601 time or a duration back from now (`15m`, `2h`, `1d`, `1h30m`).

import { parseDuration } from "../duration.js";
import { parseFlag } from "./shared-options.js";

// A date is required so that a bare number ("15") is never taken for a year or an epoch.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `--since`/`--until`: an ISO-8601 time (a date alone means its midnight UTC; a time without an
 * offset is local time, as `Date.parse` reads it) or a duration ago.
 */
export function parseTimeFlag(value: string, flag: string, now: number): Date {
  const duration = parseDuration(value);
  if (duration !== undefined) return new Date(now - duration);
  const trimmed = value.trim();
  const ms = ISO_TIME.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  const what =
    "an ISO-8601 time (e.g. 2024-06-01T12:00:00Z) or a duration ago (e.g. 30s, 15m, 2h, 1d, 1h30m)";
  return parseFlag(flag, value, what, () => (Number.isNaN(ms) ? undefined : new Date(ms)));
}
