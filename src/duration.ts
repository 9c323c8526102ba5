// A duration as people write it (`90s`, `1h30m`): one reader for flags and `rollout.bake`, so that the
// same text means the same everywhere; and the seconds a message states a wait in.

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

export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!DURATION.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(DURATION_PART)) {
    total += Number(match[1]) * UNIT_MS[match[2] as Unit];
  }
  return Number.isSafeInteger(total) ? total : undefined;
}

/** `10m`, `1h30m`, `45s`, `250ms`. */
export function formatDuration(ms: number): string {
  // No time at all reads as the manifest writes it (`bake: 0s`), not as `0ms`.
  if (ms <= 0) return "0s";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let seconds = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const unit of ["d", "h", "m"] as const) {
    const size = UNIT_MS[unit] / 1000;
    if (seconds >= size) {
      parts.push(`${Math.floor(seconds / size)}${unit}`);
      seconds %= size;
    }
  }
  if (seconds > 0 || parts.length === 0) parts.push(`${seconds}s`);
  return parts.join("");
}

/** `0.3 s`, `225 s`, `90.4 s`: seconds to a tenth, so a wait just past a bound never reads as the bound. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
