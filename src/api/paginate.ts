// Pagination over the list envelope. `next` is followed only to the next page of the same list
// (same origin, path, project, family and filters; only limit and offset may change); a whole
// list's later pages are asked for by offset, several at once, and taken as a walk along `next`
// would take them. A whole list is only handed over once its pages add up: a list that changed
// while it was paged is read again from its first page, and refused if it never holds still.

import { secrets } from "../redact.js";
import type { ApiClient } from "./client.js";
import { ResponseError } from "./errors.js";
import type { PageShape, ResponseShapes } from "./response-schemas.js";

/** Reads of one list before it is refused as changing (the first read included). */
export const LIST_READ_ATTEMPTS = 3;

// The page parameters a server may change from one page to the next: it may cap the page size
// (`limit`), and `offset` is what moves. Everything else is part of which list is read.
const PAGE_PARAMETERS: ReadonlySet<string> = new Set(["limit", "offset"]);

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
  if (
    firstPath.length !== nextPath.length ||
    firstPath.some((segment, index) => segment !== nextPath[index])
  ) {
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

function pathSegments(pathname: string): string[] {
  const segments = pathname.split("/");
  if (segments.length > 1 && segments.at(-1) === "") segments.pop();
  return segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      // Not valid percent-encoding: compared as written, so it can only match itself.
      return segment;
    }
  });
}

/** Names of the non-page parameters whose values differ (in number, value or presence). */
function differingParameters(first: URLSearchParams, next: URLSearchParams): string[] {
  const valuesByName = (params: URLSearchParams) => {
    const byName = new Map<string, string[]>();
    for (const [name, value] of params) {
      if (PAGE_PARAMETERS.has(name)) continue;
      byName.set(name, [...(byName.get(name) ?? []), value]);
    }
    return byName;
  };
  const before = valuesByName(first);
  const after = valuesByName(next);
  const names = new Set([...before.keys(), ...after.keys()]);
  const same = (a: readonly string[] = [], b: readonly string[] = []) => {
    const sortedB = [...b].sort();
    return a.length === b.length && [...a].sort().every((value, index) => value === sortedB[index]);
  };
  return [...names].filter((name) => !same(before.get(name), after.get(name))).sort();
}

/**
 * The `next` link of `page` (read at `url`), checked to be a page of the list `firstUrl` asked
 * for; undefined at the end of the list. Every page read has its link checked, followed or not.
 */
function checkedNextLink(
  client: ApiClient,
  firstUrl: URL,
  url: URL,
  page: { next: string | null; results: readonly unknown[] },
): URL | undefined {
  if (page.next === null) return undefined;
  const described = client.describeRequest("GET", url);
  let next: URL;
  try {
    next = new URL(page.next, url);
  } catch {
    throw new ResponseError("malformed_response", described, {
      problem: `next: not a URL (${JSON.stringify(secrets.excerpt(page.next, 80))})`,
    });
  }
  next.hash = "";
  if (!client.isUnderBase(next)) {
    throw new ResponseError("foreign_next_link", described, {
      link: `${next.origin}${next.pathname}`,
      base: client.base.display,
    });
  }
  const mismatch = describeNextLinkMismatch(firstUrl, next);
  if (mismatch !== undefined) {
    throw new ResponseError("next_link_off_collection", described, {
      link: `${next.pathname}${next.search}`,
      reason: mismatch,
    });
  }
  if (page.results.length === 0) {
    throw new ResponseError("pagination_loop", described, {
      reason: "a page without results links to a further page",
    });
  }
  return next;
}

/**
 * Bounds a walk along `next` links: no link followed twice, and no more pages than the largest
 * `count` seen allows at the first page's size (plus one page of slack for records added while
 * reading).
 */
class NextLinkWalk {
  readonly #visited = new Set<string>();
  #pages = 0;
  #largestCount = 0;
  #firstPageLength: number | undefined;

  /** Notes a page read at `url`; throws when following `next` from it would loop or run on. */
  admit(
    client: ApiClient,
    url: URL,
    page: { count: number; results: readonly unknown[] },
    next: URL | undefined,
  ) {
    this.#visited.add(url.href);
    this.#pages += 1;
    this.#largestCount = Math.max(this.#largestCount, page.count);
    if (next === undefined) return;
    const described = client.describeRequest("GET", url);
    if (this.#visited.has(next.href)) {
      throw new ResponseError("pagination_loop", described, {
        reason: `the next link repeats ${next.pathname}${next.search}`,
      });
    }
    this.#firstPageLength ??= page.results.length;
    const pagesAllowed = Math.ceil(this.#largestCount / this.#firstPageLength) + 1;
    if (this.#pages >= pagesAllowed) {
      throw new ResponseError("pagination_loop", described, {
        reason: `${this.#pages} pages of ${this.#firstPageLength} read and more announced, for a count of ${this.#largestCount}`,
      });
    }
  }
}

/**
 * Yields each page from `firstUrl` on. The caller puts `limit` (and any filters) in `firstUrl`;
 * later pages are the service's `next` links, each checked to be a page of the same list. The
 * pages themselves are not checked against each other: `readWholeList` does that.
 */
export async function* paginate<S extends PageShape>(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): AsyncGenerator<ResponseShapes[S], void, undefined> {
  const walk = new NextLinkWalk();
  let url: URL | undefined = firstUrl;
  while (url !== undefined) {
    const page: ResponseShapes[S] = await client.requestJson({ method: "GET", url }, shape);
    const next = checkedNextLink(client, firstUrl, url, page);
    walk.admit(client, url, page, next);
    yield page;
    url = next;
  }
}

/** The `offset` a page URL asks for (absent: 0). The URL's parameters are already checked. */
function offsetOf(url: URL): number {
  return Number(url.searchParams.get("offset") ?? 0);
}

/** A page read by offset, or why it could not be. */
type OffsetPage<P> =
  | { read: true; url: URL; offset: number; page: P; next: URL | undefined }
  | { read: false; error: unknown };

/**
 * The pages of one read of a list. Once the first page gives `count` and the page size the
 * server keeps to (its result count: a server may cap `limit` below what was asked), the other
 * pages are asked for by offset, several at once, through the client's limiter (its bound on
 * requests in flight is shared with every other read) and never more than the client's
 * concurrency of them waiting for it. The pages taken are those a walk along `next` would have
 * read: a page is only taken after every page before it, the read ends at the first page without
 * a `next` link, and from a page that is not as planned (not full, or a link to an offset other
 * than the one after it), the rest is read by following `next` one page at a time. A page's error
 * surfaces only if no page before it ended the walk, so a read fails as the walk would have.
 */
async function readListPages<S extends "recordPage" | "projectPage">(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): Promise<ResponseShapes[S][]> {
  const walk = new NextLinkWalk();
  const first: ResponseShapes[S] = await client.requestJson({ method: "GET", url: firstUrl }, shape);
  const firstNext = checkedNextLink(client, firstUrl, firstUrl, first);
  walk.admit(client, firstUrl, first, firstNext);
  const pages = [first];
  if (firstNext === undefined) return pages;
  const pageSize = first.results.length;
  const { count } = first;
  let last: { url: URL; page: ResponseShapes[S]; next: URL | undefined } = {
    url: firstUrl,
    page: first,
    next: firstNext,
  };
  // Only a server that pages by plain offset is read by offset; any other follows its links.
  if (offsetOf(firstNext) === pageSize) {
    const fetched = await readPagesByOffset(client, firstUrl, shape, pageSize, count);
    for (const taken of fetched) {
      if (!taken.read) throw taken.error;
      walk.admit(client, taken.url, taken.page, taken.next);
      pages.push(taken.page);
      last = taken;
      // A list whose count moved is read again anyway (see findListInconsistency).
      if (taken.page.count !== count) return pages;
      if (!isAsPlanned(taken, pageSize)) break;
    }
  }
  for (let url = last.next; url !== undefined; ) {
    const page: ResponseShapes[S] = await client.requestJson({ method: "GET", url }, shape);
    const next = checkedNextLink(client, firstUrl, url, page);
    walk.admit(client, url, page, next);
    pages.push(page);
    url = next;
  }
  return pages;
}

/** Whether a page read by offset links on to the page the read already asked for after it. */
function isAsPlanned(taken: { offset: number; page: ListedPage; next: URL | undefined }, pageSize: number) {
  return (
    taken.next !== undefined &&
    taken.page.results.length === pageSize &&
    offsetOf(taken.next) === taken.offset + pageSize
  );
}

/**
 * Pages `pageSize`, `2 * pageSize`, ... below `count`, in offset order, at most the client's
 * concurrency of them asked at once. No page is asked once one before it ended the walk (no
 * `next`), was not as planned, failed, or showed another count: its successors would be thrown
 * away. The pages after the first that stopped the asking are returned too; the caller reads in
 * order and stops there.
 */
async function readPagesByOffset<S extends "recordPage" | "projectPage">(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
  pageSize: number,
  count: number,
): Promise<OffsetPage<ResponseShapes[S]>[]> {
  const planned = Math.ceil(count / pageSize) - 1;
  const taken: OffsetPage<ResponseShapes[S]>[] = [];
  let asked = 0;
  let stopped = false;
  const askNext = async (): Promise<void> => {
    while (!stopped && asked < planned) {
      const index = asked++;
      const offset = pageSize * (index + 1);
      const url = new URL(firstUrl.href);
      url.searchParams.set("limit", String(pageSize));
      url.searchParams.set("offset", String(offset));
      try {
        const page: ResponseShapes[S] = await client.requestJson({ method: "GET", url }, shape);
        const next = checkedNextLink(client, firstUrl, url, page);
        const read = { read: true, url, offset, page, next } as const;
        taken[index] = read;
        if (page.count !== count || !isAsPlanned(read, pageSize)) stopped = true;
      } catch (error) {
        taken[index] = { read: false, error };
        stopped = true;
      }
    }
  };
  const askers = Math.min(client.concurrency, planned);
  await Promise.all(Array.from({ length: askers }, askNext));
  return taken;
}

/** What the consistency check needs of a page. */
export interface ListedPage {
  count: number;
  results: readonly { id: number | string }[];
}

/**
 * Why the pages of one read of a list do not add up to one state of it, or undefined when they
 * do: `count` must be the same on every page, every id listed once, and the records read as many
 * as `count`. A record deleted between two pages shifts the offsets (one is skipped, `count`
 * drops); one inserted shows a record twice; a record moved across a page boundary (a reorder)
 * is read twice or not at all, and with `count` steady a skip implies a repeat. `count` and the
 * page's records come from two queries of the service, so even a single page can disagree with
 * itself while the list changes. What the envelope cannot show: a record deleted behind the read
 * and another inserted ahead of it between the same two pages (count, ids and total all agree);
 * apply's dedupe after its creates is what catches a create planned from such a read.
 */
export function findListInconsistency(pages: readonly ListedPage[]): string | undefined {
  const [first] = pages;
  if (first === undefined) return undefined;
  for (const [index, page] of pages.entries()) {
    const previous = pages[index - 1];
    if (previous !== undefined && page.count !== previous.count) {
      return `the count went from ${previous.count} to ${page.count} between pages ${index} and ${index + 1}`;
    }
  }
  const pageOf = new Map<string, number>();
  let read = 0;
  for (const [index, page] of pages.entries()) {
    for (const { id } of page.results) {
      read += 1;
      // Project ids may come as numbers or strings: 7 and "7" are one project.
      const key = String(id);
      const earlier = pageOf.get(key);
      if (earlier !== undefined) {
        const where =
          earlier === index + 1 ? `twice on page ${earlier}` : `on pages ${earlier} and ${index + 1}`;
        return `id ${key} is listed ${where}`;
      }
      pageOf.set(key, index + 1);
    }
  }
  if (read !== first.count) {
    return `${read} ${read === 1 ? "record was" : "records were"} listed for a count of ${first.count}`;
  }
  return undefined;
}

/** The items of a list shape. */
export type ListItem<S extends "recordPage" | "projectPage"> = ResponseShapes[S]["results"][number];

/**
 * Every item of a list, from one read (see readListPages) whose pages add up (see
 * findListInconsistency). A read that does not is thrown away and the list read again from its
 * first page, after a short backoff, up to LIST_READ_ATTEMPTS reads; then
 * ListChangedDuringReadError. Nothing of a read is handed over
 * before the whole of it is checked, so no caller can act on part of an inconsistent list.
 */
export async function readWholeList<S extends "recordPage" | "projectPage">(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): Promise<ListItem<S>[]> {
  const shownUrl = `${firstUrl.pathname}${firstUrl.search}`;
  for (let read = 1; ; read += 1) {
    const pages = await readListPages(client, firstUrl, shape);
    const problem = findListInconsistency(pages);
    if (problem === undefined) return pages.flatMap((page): ListItem<S>[] => page.results);
    if (read >= LIST_READ_ATTEMPTS) {
      throw new ResponseError("list_changed_during_read", client.describeRequest("GET", firstUrl), {
        reads: read,
        problem: problem,
      });
    }
    client.traceLine(
      `GET ${shownUrl}: the list changed while it was read (${problem}); reading it again (${read + 1}/${LIST_READ_ATTEMPTS})`,
    );
    await client.backoff(read);
  }
}
