// One walk along a list's pages: each `next` link must be a page of the same list further on, and a
// list that never ends is stopped before memory or requests grow without end. paginate.ts uses it.

import { formatSeconds } from "../duration.js";
import { FAMILY_NAMES } from "../families.js";
import { plural } from "../plural.js";
import type { ApiClient } from "./client.js";
import type { PageShape, ResponseShapes } from "./response-schemas.js";
import { type FailedRequest, ServiceError } from "./service-error.js";

// A server may cap `limit`, and `offset` is what moves: every other parameter names the list read.
const PAGE_PARAMETERS: ReadonlySet<string> = new Set(["limit", "offset"]);

/** Absent: 0. The URL's parameters are already checked. */
export function offsetOf(url: URL): number {
  return Number(url.searchParams.get("offset") ?? 0);
}

/** Percent-decoded, without a trailing empty one for a trailing slash. */
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

/** For messages: `project 1's plugin_configs`, `the project list`, `the logs of config 7 in ...`. */
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
 * Why `next` is not a page of the list `first` asked for. Both are on the base URL already. Paths
 * compare decoded, one trailing slash optional (the service takes both); the URL parser has resolved
 * dot segments, `%2e` ones included. Other parameters compare as a multiset of decoded pairs.
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

function differingParameters(first: URLSearchParams, next: URLSearchParams): string[] {
  const names = new Set([...first.keys(), ...next.keys()].filter((name) => !PAGE_PARAMETERS.has(name)));
  const values = (params: URLSearchParams, name: string) => JSON.stringify(params.getAll(name).sort());
  return [...names].filter((name) => values(first, name) !== values(next, name)).sort();
}

export type PageAndNext<S extends PageShape> = { page: ResponseShapes[S]; next: URL | undefined };

/**
 * One read of a list (its re-reads included), held to the bounds. With pages never empty, links that
 * go further on, and a read that stops once records pass the count or repeat (paginate.ts), a read
 * ends within `count` pages; the time bound ends one whose pages come slowly.
 */
export class ListWalk {
  readonly #client: ApiClient;
  readonly #firstUrl: URL;
  /** What messages name. */
  readonly #list: FailedRequest;
  readonly #startedAt: number;
  readonly #maxRecords: number | undefined;
  #pages = 0;
  #records = 0;
  /** Time the caller of a paged iteration spent away, which the bound does not count. */
  #pausedMs = 0;
  #pausedAt: number | undefined;

  /** `boundCount` false: a stream read only in part (logs), whose count is not bounded. */
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

  async read<S extends PageShape>(url: URL, shape: S): Promise<PageAndNext<S>> {
    this.#checkTime();
    const page: ResponseShapes[S] = await this.#client.requestJson({ method: "GET", url }, shape);
    return { page, next: this.#checkedNextLink(url, page) };
  }

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
