// How far pcsync reads one list. A server whose list never ends (an implausible `count`, `next`
// links that do not move on or that point past what `count` allows, pages that come slowly for
// ever) is stopped with an error naming the list, before memory or requests grow without end.

import { formatSeconds } from "../duration.js";
import { FAMILY_NAMES } from "../families.js";
import { type FailedRequest, ServiceError } from "./service-error.js";

export interface ListBounds {
  /** The most records one list may hold: a larger `count` is refused at the first page. */
  maxRecords: number;
  /** The longest one list may take to read, all its pages and re-reads together (ms). */
  maxReadMs: number;
}

export const LIST_BOUND_DEFAULTS = {
  maxRecords: 100_000,
  maxReadMs: 300_000,
} as const satisfies ListBounds;

/** The `offset` a page URL asks for (absent: 0). The URL's parameters are already checked. */
export function offsetOf(url: URL): number {
  return Number(url.searchParams.get("offset") ?? 0);
}

/** A path's segments, percent-decoded (without a trailing empty one for a trailing slash). */
export function pathSegments(pathname: string): string[] {
  const segments = pathname.split("/");
  if (segments.length > 1 && segments.at(-1) === "") segments.pop();
  return segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      // Not valid percent-encoding: taken as written, so it can only match itself.
      return segment;
    }
  });
}

/**
 * The list a path reads, for messages: `project 1's plugin_configs`, `the project list`, `the logs
 * of config 7 in project 1's plugin_configs`. Any path prefix of the base URL is skipped.
 */
export function nameList(path: string): string {
  const segments = pathSegments(path).filter((segment) => segment !== "");
  const at = segments.lastIndexOf("projects");
  const [project, family, config, logs] = segments.slice(at + 1);
  if (at < 0 || project === undefined) return "the project list";
  const familyName =
    family !== undefined && (FAMILY_NAMES as readonly string[]).includes(family) ? family : "list";
  const list = `project ${project}'s ${familyName}`;
  return logs === "logs" && config !== undefined ? `the logs of config ${config} in ${list}` : list;
}

/**
 * Holds one read of a list (its re-reads included) to the bounds. Every page is admitted before it
 * is used: its count must be plausible (when the list is read whole), and its `next` link must go
 * further on (a higher offset). With pages that are never empty, and a read that stops once its
 * records pass the count or repeat (paginate.ts), a read ends within `count` pages; the time bound
 * ends one whose pages come slowly.
 */
export class ListWalk {
  readonly #list: FailedRequest;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #maxReadMs: number;
  readonly #maxRecords: number | undefined;
  #pages = 0;
  #records = 0;
  /** Time the reader spent away (the caller of a paged iteration), which the bound does not count. */
  #pausedMs = 0;
  #pausedAt: number | undefined;

  constructor(options: {
    /** The first request of the list: what messages name. */
    list: FailedRequest;
    now: () => number;
    bounds: ListBounds;
    /** False for a stream read only in part (logs): its count may be large, and is not bounded. */
    boundCount: boolean;
  }) {
    this.#list = options.list;
    this.#now = options.now;
    this.#startedAt = options.now();
    this.#maxReadMs = options.bounds.maxReadMs;
    this.#maxRecords = options.boundCount ? options.bounds.maxRecords : undefined;
  }

  /** The caller has a page and reads no further until `resume`. */
  pause(): void {
    this.#pausedAt ??= this.#now();
  }

  resume(): void {
    if (this.#pausedAt !== undefined) this.#pausedMs += this.#now() - this.#pausedAt;
    this.#pausedAt = undefined;
  }

  /** Throws once the read has taken longer than its bound; called before each page is asked for. */
  checkTime(): void {
    const elapsedMs = this.#now() - this.#startedAt - this.#pausedMs;
    if (elapsedMs <= this.#maxReadMs) return;
    throw new ServiceError("list_too_long", this.#list, {
      reason: `reading ${nameList(this.#list.path)} has taken ${formatSeconds(elapsedMs)}, more than the ${formatSeconds(this.#maxReadMs)} one list may take (--list-timeout), after ${this.#pages} ${this.#pages === 1 ? "page" : "pages"} and ${this.#records} ${this.#records === 1 ? "record" : "records"}`,
      bound: "--list-timeout",
    });
  }

  /** Checks a page read at `url` and its `next` link (undefined at the end of the list). */
  admit(url: URL, page: { count: number; results: readonly unknown[] }, next: URL | undefined): void {
    this.#pages += 1;
    this.#records += page.results.length;
    if (this.#maxRecords !== undefined && page.count > this.#maxRecords) {
      throw new ServiceError("list_too_long", this.#list, {
        reason: `the service gives the count of ${nameList(this.#list.path)} as ${page.count}, more than the ${this.#maxRecords} records pcsync reads of one list (--max-list-records)`,
        bound: "--max-list-records",
      });
    }
    if (next === undefined) return;
    const from = offsetOf(url);
    const to = offsetOf(next);
    if (to <= from) {
      throw new ServiceError("pagination_loop", this.#list, {
        reason: `in ${nameList(this.#list.path)}, the next link of the page at offset ${from} goes to offset ${to}, which is not further on`,
      });
    }
  }
}
