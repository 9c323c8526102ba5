// Time flags of `pcsync logs`: an ISO-8601 time or a duration back from now (`15m`, `2h`, `1d`, `1h30m`).

import { UsageError } from "../errors.js";

const UNIT_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const satisfies Record<string, number>;

type Unit = keyof typeof UNIT_MS;

const DURATION = /^(?:\d+(?:ms|[smhdw]))+$/;
const DURATION_PART = /(\d+)(ms|[smhdw])/g;
// A date is required so that a bare number ("15") is never taken for a year or an epoch.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** The length of a duration like `90s`, `15m`, `1h30m` in milliseconds; undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!DURATION.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(DURATION_PART)) {
    total += Number(match[1]) * UNIT_MS[match[2] as Unit];
  }
  return Number.isSafeInteger(total) ? total : undefined;
}

/**
 * `--since`/`--until`: an ISO-8601 time (a date alone means its midnight UTC; a time without an
 * offset is local time, as `Date.parse` reads it) or a duration ago.
 */
export function parseTimeFlag(value: string, flag: string, now: number): Date {
  const duration = parseDuration(value);
  if (duration !== undefined) return new Date(now - duration);
  const trimmed = value.trim();
  const ms = ISO_TIME.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new UsageError(
      `${flag} must be an ISO-8601 time (e.g. 2024-06-01T12:00:00Z) or a duration ago (e.g. 30s, 15m, 2h, 1d, 1h30m), not "${value}"`,
    );
  }
  return new Date(ms);
}
