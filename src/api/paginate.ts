// Pagination over the list envelope. `next` is followed only to the next page of the same list
// (same origin, path, project, family and filters; only limit and offset may change), and a
// whole list is only handed over once its pages add up: a list that changed while it was paged
// is read again from its first page, and refused if it never holds still.

import { secrets } from "../redact.js";
import type { ApiClient } from "./client.js";
import {
  ForeignNextLinkError,
  ListChangedDuringReadError,
  MalformedResponseError,
  NextLinkOffCollectionError,
  PaginationLoopError,
} from "./errors.js";
import type { PageShape, ResponseShapes } from "./validate-response.js";

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
 * Yields each page from `firstUrl` on. The caller puts `limit` (and any filters) in `firstUrl`;
 * later pages are the service's `next` links, each checked to be a page of the same list. The
 * pages themselves are not checked against each other: `readWholeList` does that.
 */
export async function* paginate<S extends PageShape>(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): AsyncGenerator<ResponseShapes[S], void, undefined> {
  const visited = new Set<string>();
  let url: URL | undefined = firstUrl;
  let pages = 0;
  let largestCount = 0;
  let firstPageLength: number | undefined;
  while (url !== undefined) {
    visited.add(url.href);
    const page: ResponseShapes[S] = await client.requestJson({ method: "GET", url }, shape);
    pages += 1;
    let next: URL | undefined;
    if (page.next !== null) {
      const described = client.describeRequest("GET", url);
      try {
        next = new URL(page.next, url);
      } catch {
        throw new MalformedResponseError(
          described,
          `next: not a URL (${JSON.stringify(secrets.excerpt(page.next, 80))})`,
        );
      }
      next.hash = "";
      if (!client.isUnderBase(next)) {
        throw new ForeignNextLinkError(described, `${next.origin}${next.pathname}`, client.base.display);
      }
      const mismatch = describeNextLinkMismatch(firstUrl, next);
      if (mismatch !== undefined) {
        throw new NextLinkOffCollectionError(described, `${next.pathname}${next.search}`, mismatch);
      }
      if (visited.has(next.href)) {
        throw new PaginationLoopError(described, `the next link repeats ${next.pathname}${next.search}`);
      }
      if (page.results.length === 0) {
        throw new PaginationLoopError(described, "a page without results links to a further page");
      }
      largestCount = Math.max(largestCount, page.count);
      firstPageLength ??= page.results.length;
      // One page of slack for records added while reading.
      const pagesAllowed = Math.ceil(largestCount / firstPageLength) + 1;
      if (pages >= pagesAllowed) {
        throw new PaginationLoopError(
          described,
          `${pages} pages of ${firstPageLength} read and more announced, for a count of ${largestCount}`,
        );
      }
    }
    yield page;
    url = next;
  }
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
 * Every item of a list, from one read whose pages add up (see findListInconsistency). A read that
 * does not is thrown away and the list read again from its first page, after a short backoff, up
 * to LIST_READ_ATTEMPTS reads; then ListChangedDuringReadError. Nothing of a read is handed over
 * before the whole of it is checked, so no caller can act on part of an inconsistent list.
 */
export async function readWholeList<S extends "recordPage" | "projectPage">(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): Promise<ListItem<S>[]> {
  const shownUrl = `${firstUrl.pathname}${firstUrl.search}`;
  for (let read = 1; ; read += 1) {
    const pages: ResponseShapes[S][] = [];
    for await (const page of paginate(client, firstUrl, shape)) pages.push(page);
    const problem = findListInconsistency(pages);
    if (problem === undefined) return pages.flatMap((page): ListItem<S>[] => page.results);
    if (read >= LIST_READ_ATTEMPTS) {
      throw new ListChangedDuringReadError(client.describeRequest("GET", firstUrl), read, problem);
    }
    client.traceLine(
      `GET ${shownUrl}: the list changed while it was read (${problem}); reading it again (${read + 1}/${LIST_READ_ATTEMPTS})`,
    );
    await client.backoff(read);
  }
}
