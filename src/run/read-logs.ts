// The logs use case: a config's entries that match a query, newest first, and following them as they
// arrive (log-follow.ts remembers what was shown), through a service hiccup.

import { setTimeout as sleep } from "node:timers/promises";
import {
  type ApiClient,
  isApiError,
  isRequestError,
  iterateLogs,
  type LogEntry,
  type LogQuery,
} from "../api/index.js";
import type { FamilyName } from "../families.js";
import { LogFollowCursor } from "./log-follow.js";

export interface LogSource {
  client: ApiClient;
  project: string;
  family: FamilyName;
  configId: number;
}

/** Newest first. */
async function readLogs(source: LogSource, query: LogQuery, max?: number): Promise<LogEntry[]> {
  const { client } = source;
  const entries: LogEntry[] = [];
  const limited = max === undefined ? query : { ...query, limit: Math.min(max, client.pageSize) };
  for await (const entry of iterateLogs(client, source.project, source.family, source.configId, limited, max))
    entries.push(entry);
  return entries;
}

/** `complete`: they are all that match. */
export async function readLogTail(
  source: LogSource,
  query: LogQuery,
  limit: number,
): Promise<{ entries: LogEntry[]; complete: boolean }> {
  // One more than asked tells whether older entries were left out.
  const backlog = await readLogs(source, query, limit + 1);
  return { entries: backlog.slice(0, limit), complete: backlog.length <= limit };
}

/** A poll in flight finishes first, so nothing is half shown. `warn` gets a line without `warning: `. */
export async function followLogs(
  source: LogSource,
  query: LogQuery,
  tail: { entries: readonly LogEntry[]; complete: boolean; since: Date | undefined },
  run: {
    intervalMs: number;
    stop: AbortSignal;
    show: (entry: LogEntry) => void;
    warn: (line: string) => void;
  },
): Promise<void> {
  const cursor = new LogFollowCursor(tail.entries, { complete: tail.complete, since: tail.since });
  const warnAhead = () => {
    const warning = cursor.takeWarning();
    if (warning !== undefined) run.warn(warning);
  };
  warnAhead();
  while (!run.stop.aborted) {
    try {
      await sleep(run.intervalMs, undefined, { signal: run.stop });
    } catch {
      break;
    }
    try {
      const after = cursor.nextAfter();
      const polled = await readLogs(source, { ...query, ...(after ? { after } : {}) });
      for (const entry of cursor.accept(polled)) run.show(entry);
      warnAhead();
    } catch (error) {
      // The client has already retried; a tail left running should outlast a service hiccup.
      if (!isTransient(error)) throw error;
      run.warn(`${(error as Error).message}; still following`);
    }
  }
}

function isTransient(error: unknown): boolean {
  if (isRequestError(error, "network_error", "timeout")) return true;
  return isApiError(error) && (error.status === 429 || error.status >= 500);
}
