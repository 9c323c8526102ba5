// One walk along a list's pages, each read and checked before it is used: its `next` link must be
// a page of the same list (same origin, path, project, family and filters; only limit and offset
// may change) further on, and a server whose list never ends (an implausible `count`, links that
// do not move on, pages that come slowly for ever) is stopped with an error naming the list, before
// memory or requests grow without end. paginate.ts builds its readers on it.

import { formatSeconds } from "../duration.js";
import { FAMILY_NAMES } from "../families.js";
import { plural } from "../plural.js";
import type { ApiClient } from "./client.js";
import type { PageShape, ResponseShapes } from "./response-schemas.js";
import { type FailedRequest, ServiceError } from "./service-error.js";

// The page parameters a server may change from one page to the next: it may cap the page size
// (`limit`), and `offset` is what moves. Everything else is part of which list is read.
const PAGE_PARAMETERS: ReadonlySet<string> = new Set(["limit", "offset"]);

/** The `offset` a page URL asks for (absent: 0). The URL's parameters are already checked. */
export function offsetOf(url: URL): number {
  return Number(url.searchParams.get("offset") ?? 0);
}

/** A path's segments, percent-decoded (without a trailing empty one for a trailing slash). */
function pathSegments(pathname: string): string[] {
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
function nameList(path: string): string {
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
 * Why `next` is not a page of the list `first` asked for, or undefined when it is. Both URLs are
 * absolute and on the base URL (origin and prefix are checked before). Paths compare segment by
 * segment after percent-decoding, with one trailing slash optional (the service takes both); the
 * URL parser has already resolved dot segments, `%2e` ones included. Query parameters other than
 * limit and offset compare as a multiset of decoded name/value pairs; the fragment is never sent.
 */
export function describeNextLinkMismatch(first: URL, next: URL): string | undefined {
  const firstPath = pathSegments(first.pathname);
  const nextPath = pathSegments(next.pathname);
  if (JSON.stringify(firstPath) !== JSON.stringify(nextPath)) {
    return `its path is ${next.pathname}, not ${first.pathname}`;
  }
  for (const name of PAGE_PARAMETERS) {
    const values = next.searchParams.getAll(name);
    if (values.length > 1) return `it gives ${name} ${values.length} times`;
    const [value] = values;
    if (value !== undefined && !/^\d{1,15}$/.test(value)) {
      return `its ${name} ${JSON.stringify(value.slice(0, 40))} is not a non-negative integer`;
    }
  }
  const differing = differingParameters(first.searchParams, next.searchParams);
  if (differing.length > 0) {
    return `its query differs from the first request's in ${differing.map((name) => JSON.stringify(name.slice(0, 40))).join(", ")}`;
  }
  return undefined;
}

/** Names of the non-page parameters whose values differ (in number, value or presence). */
function differingParameters(first: URLSearchParams, next: URLSearchParams): string[] {
  const names = new Set([...first.keys(), ...next.keys()].filter((name) => !PAGE_PARAMETERS.has(name)));
  const values = (params: URLSearchParams, name: string) => JSON.stringify(params.getAll(name).sort());
  return [...names].filter((name) => values(first, name) !== values(next, name)).sort();
}

/** A page read, and its checked `next` link (undefined at the end of the list). */
export type PageAndNext<S extends PageShape> = { page: ResponseShapes[S]; next: URL | undefined };

/**
 * One read of the list `firstUrl` starts (its re-reads included), held to the bounds. Every page
 * has its `next` link checked as it is read, followed or not, and is admitted before it is used:
 * its count must be plausible (when the list is read whole), and its `next` link must go further
 * on (a higher offset). With pages that are never empty, and a read that stops once its records
 * pass the count or repeat (paginate.ts), a read ends within `count` pages; the time bound ends one
 * whose pages come slowly.
 */
export class ListWalk {
  readonly #client: ApiClient;
  readonly #firstUrl: URL;
  /** The first request of the list: what messages name. */
  readonly #list: FailedRequest;
  readonly #startedAt: number;
  readonly #maxRecords: number | undefined;
  #pages = 0;
  #records = 0;
  /** Time the reader spent away (the caller of a paged iteration), which the bound does not count. */
  #pausedMs = 0;
  #pausedAt: number | undefined;

  /** `boundCount` false: a stream read only in part (logs), whose count may be large and is not bounded. */
  constructor(client: ApiClient, firstUrl: URL, boundCount: boolean) {
    this.#client = client;
    this.#firstUrl = firstUrl;
    this.#list = client.describeRequest("GET", firstUrl);
    this.#startedAt = client.now();
    this.#maxRecords = boundCount ? client.listBounds.maxRecords : undefined;
  }

  /** The caller has a page and reads no further until `resume`. */
  pause(): void {
    this.#pausedAt ??= this.#client.now();
  }

  resume(): void {
    if (this.#pausedAt !== undefined) this.#pausedMs += this.#client.now() - this.#pausedAt;
    this.#pausedAt = undefined;
  }

  /** The page at `url` and its checked `next` link; throws once the read has taken too long. */
  async read<S extends PageShape>(url: URL, shape: S): Promise<PageAndNext<S>> {
    this.#checkTime();
    const page: ResponseShapes[S] = await this.#client.requestJson({ method: "GET", url }, shape);
    return { page, next: this.#checkedNextLink(url, page) };
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

  #checkTime(): void {
    const elapsedMs = this.#client.now() - this.#startedAt - this.#pausedMs;
    const maxReadMs = this.#client.listBounds.maxReadMs;
    if (elapsedMs <= maxReadMs) return;
    throw new ServiceError("list_too_long", this.#list, {
      reason: `reading ${nameList(this.#list.path)} has taken ${formatSeconds(elapsedMs)}, more than the ${formatSeconds(maxReadMs)} one list may take (--list-timeout), after ${plural(this.#pages, "page")} and ${plural(this.#records, "record")}`,
      bound: "--list-timeout",
    });
  }

  /** The `next` link of `page` (read at `url`), checked to be a page of this list further on. */
  #checkedNextLink(url: URL, page: { next: string | null; results: readonly unknown[] }): URL | undefined {
    if (page.next === null) return undefined;
    const client = this.#client;
    const failedRequest = client.describeRequest("GET", url);
    if (!URL.canParse(page.next, url.href)) {
      throw new ServiceError("malformed_response", failedRequest, {
        problem: `next: not a URL (${JSON.stringify(client.secrets.excerpt(page.next, 80))})`,
      });
    }
    const next = new URL(page.next, url);
    next.hash = "";
    if (!client.isUnderBase(next)) {
      throw new ServiceError("foreign_next_link", failedRequest, {
        link: `${next.origin}${next.pathname}`,
        base: client.base.display,
      });
    }
    const mismatch = describeNextLinkMismatch(this.#firstUrl, next);
    if (mismatch !== undefined) {
      throw new ServiceError("next_link_off_collection", failedRequest, {
        link: `${next.pathname}${next.search}`,
        reason: mismatch,
      });
    }
    if (page.results.length === 0) {
      throw new ServiceError("pagination_loop", failedRequest, {
        reason: "a page without results links to a further page",
      });
    }
    return next;
  }
}
