// The memory of `pcsync logs --follow`: which entries were printed, and from when to ask for more, so
// that polling never prints one twice and tolerates entries that arrive a little late.

import type { LogEntry } from "../api/index.js";

/** How far before the newest printed entry each poll looks again, for entries stored late. */
export const FOLLOW_OVERLAP_MS = 10_000;

/**
 * How far past this machine's clock an entry's time still moves the cursor. One stamped later (a clock
 * ahead) is printed, but never makes the next poll skip later entries stamped now.
 */
export const FOLLOW_CLOCK_SKEW_MS = 5_000;

export class LogFollowCursor {
  /** Older entries (inclusive bound) precede what was shown: never printed. */
  readonly #floorMs: number | undefined;
  #newestMs: number | undefined;
  /** Printed entries a later poll may return again: id -> timestamp. */
  readonly #seen = new Map<string, number>();
  readonly #overlapMs: number;
  readonly #now: () => number;
  /** The first entry stamped past the skew, until the caller has warned of it. */
  #ahead: { entry: LogEntry; aheadMs: number } | undefined;
  #warned = false;

  /** `backlog`: printed already, any order; `complete`: not cut by `--limit`; `since`: its `--since`. */
  constructor(
    backlog: readonly LogEntry[],
    options: { complete: boolean; since?: Date | undefined; overlapMs?: number; now?: () => number },
  ) {
    this.#overlapMs = options.overlapMs ?? FOLLOW_OVERLAP_MS;
    this.#now = options.now ?? Date.now;
    for (const entry of backlog) this.#remember(entry);
    if (!options.complete && this.#newestMs !== undefined) {
      // Older entries left out by --limit must not reappear as if they were new. An entry stamped
      // in the future does not count: entries stamped now, after it, are new.
      const now = this.#now();
      let floor: number | undefined;
      for (const entry of backlog) {
        const ms = Date.parse(entry.timestamp);
        if (ms <= now + FOLLOW_CLOCK_SKEW_MS && (floor === undefined || ms > floor)) floor = ms;
      }
      this.#floorMs = floor ?? now;
    } else if (options.since !== undefined) {
      // The service's `after` is exclusive; keep it so when polls look earlier.
      this.#floorMs = options.since.getTime() + 1;
    }
  }

  /** Exclusive, as the service reads it. */
  nextAfter(): Date | undefined {
    // Never past now plus the skew, whatever an entry's time says.
    const newest =
      this.#newestMs === undefined ? undefined : Math.min(this.#newestMs, this.#now() + FOLLOW_CLOCK_SKEW_MS);
    const candidates = [this.#floorMs, newest === undefined ? undefined : newest - this.#overlapMs];
    const bounds = candidates.filter((value): value is number => value !== undefined);
    if (bounds.length === 0) return undefined;
    // bounded-spread: at most the two candidates above.
    return new Date(Math.max(...bounds) - 1);
  }

  /** The poll's entries (newest first) not printed yet, oldest first; remembers them. */
  accept(polled: readonly LogEntry[]): LogEntry[] {
    const fresh: { entry: LogEntry; ms: number }[] = [];
    // Reversing first keeps the service's order among entries of the same millisecond.
    for (const entry of [...polled].reverse()) {
      if (this.#seen.has(entry.id)) continue;
      const ms = Date.parse(entry.timestamp);
      if (this.#floorMs !== undefined && ms < this.#floorMs) continue;
      fresh.push({ entry, ms });
    }
    fresh.sort((a, b) => (Number.isNaN(a.ms) || Number.isNaN(b.ms) ? 0 : a.ms - b.ms));
    for (const { entry } of fresh) this.#remember(entry);
    this.#forgetUnreachable();
    return fresh.map(({ entry }) => entry);
  }

  /** Once per run, for an entry stamped past this machine's clock and the skew. */
  takeWarning(): string | undefined {
    if (this.#ahead === undefined || this.#warned) return undefined;
    this.#warned = true;
    const { entry, aheadMs } = this.#ahead;
    return `the entry of ${entry.timestamp} is stamped ${describeAhead(aheadMs)} ahead of this machine's clock (the service's or the plugin's clock is off); entries that come later are still shown, in the order they arrive`;
  }

  #remember(entry: LogEntry): void {
    const parsed = Date.parse(entry.timestamp);
    const aheadMs = parsed - this.#now();
    if (!this.#warned && this.#ahead === undefined && aheadMs > FOLLOW_CLOCK_SKEW_MS) {
      this.#ahead = { entry, aheadMs };
    }
    // An unparsable time cannot move the cursor; it is kept as long as the newest entry is.
    const ms = Number.isNaN(parsed) ? (this.#newestMs ?? 0) : parsed;
    if (!Number.isNaN(parsed) && (this.#newestMs === undefined || ms > this.#newestMs)) this.#newestMs = ms;
    this.#seen.set(entry.id, ms);
  }

  /** Memory stays bounded however long it runs. */
  #forgetUnreachable(): void {
    const after = this.nextAfter();
    if (after === undefined) return;
    for (const [id, ms] of this.#seen) if (ms < after.getTime()) this.#seen.delete(id);
  }
}

function describeAhead(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}
