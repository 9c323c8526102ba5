// The one list reader, built on ListWalk (list-walk.ts), which reads and checks each page. A whole
// list (listItems: a family, the project list) is read as one consistent state: its later pages
// are asked for by offset, several at once, taken as a walk along `next` would take them, and
// handed over only once they add up; a list that changed while it was paged is read again from its
// first page, and refused if it never holds still. A stream (paginate: logs) is handed over page by
// page, as an async iterator, as it is read.
import { appendAll } from "../append-all.js";
import type { ApiClient } from "./client.js";
import { ListWalk, offsetOf, type PageAndNext } from "./list-walk.js";
import type { PageShape, ResponseShapes } from "./response-schemas.js";
import { ServiceError } from "./service-error.js";

/** Reads of one list before it is refused as changing (the first read included). */
export const LIST_READ_ATTEMPTS = 3;

/**
 * The pages of a stream (logs) that `firstUrl` starts; the caller puts `limit` (and any filters) in
 * it. Later pages are the service's `next` links, each checked to be a page of the same list and to
 * go further on (see ListWalk). Each page is handed over as it is read, not checked against the
 * others; the time bound counts the time spent reading, not the time the caller spends between pages.
 */
export async function* paginate<S extends PageShape>(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): AsyncGenerator<ResponseShapes[S], void, undefined> {
  const walk = new ListWalk(client, firstUrl, false);
  for (let url: URL | undefined = firstUrl; url !== undefined; ) {
    const { page, next }: PageAndNext<S> = await walk.read(url, shape);
    walk.admit(url, page, next);
    walk.pause();
    yield page;
    walk.resume();
    url = next;
  }
}

/** A page read, or why it could not be (kept until the walk reaches it: see readListPages). */
type PageRead<P> = { ok: true; url: URL; page: P; next: URL | undefined } | { ok: false; error: unknown };

/** One read of a list: its pages in order, and why they are not one state of it (the read stopped there). */
interface ListRead<P> {
  pages: P[];
  problem: string | undefined;
}

/**
 * The pages of one read of a list, taken as a walk along `next` takes them. Once the first page
 * gives `count` and the page size the server keeps to (its result count: a server may cap `limit`
 * below what was asked), and its `next` is the plain offset after it, the pages below `count` are
 * asked for by offset ahead of the walk: through the client's limiter (its bound on requests in
 * flight is shared with every other read), never more than the client's concurrency of them at
 * once nor more than twice that ahead of the page the walk is at (a slow page holds the askers,
 * not the memory of all the pages after it). A page is only taken after every page before it, the
 * read ends at the first page without a `next` link, and from a page that is not as planned (not
 * full, or a link to an offset other than the one after it), the rest is read by following `next`
 * one page at a time. No page is asked once one before it failed; a page's error surfaces only if
 * the walk reaches it, so a read fails as the walk would have. Pages are checked as they are
 * taken: the read stops at the first page that shows the pages cannot add up (a count that moved,
 * a record listed again, more records than the count), so a server repeating its pages is asked
 * for a few pages, not for its count's worth. Pages still being asked are waited for before the
 * read goes on by links or ends.
 */
async function readListPages<S extends PageShape>(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
  walk: ListWalk,
): Promise<ListRead<ResponseShapes[S]>> {
  type Read = PageRead<ResponseShapes[S]>;
  const tally = new ListTally();
  const pages: ResponseShapes[S][] = [];
  const read = (url: URL): Promise<Read> =>
    walk.read(url, shape).then((found) => ({ ok: true, url, ...found }));
  // The pages asked by offset (the one after the first page at index 0), and which have arrived.
  const ahead: Promise<Read>[] = [];
  const arrived: boolean[] = [];
  let byOffset = false;
  let pageSize = 0;
  let planned = 0;
  let inFlight = 0;
  let failed = false;
  // Asked when the walk waits for a page: pages that arrived are taken first, and may end the walk.
  const askAhead = (): void => {
    const limit = Math.min(planned, pages.length - 1 + 2 * client.concurrency);
    while (byOffset && !failed && inFlight < client.concurrency && ahead.length < limit) {
      const index = ahead.length;
      const url = new URL(firstUrl.href);
      url.searchParams.set("limit", String(pageSize));
      url.searchParams.set("offset", String(pageSize * (index + 1)));
      inFlight += 1;
      const asked = read(url).catch((error: unknown): Read => {
        failed = true;
        return { ok: false, error };
      });
      ahead.push(
        asked.finally(() => {
          inFlight -= 1;
          arrived[index] = true;
          // The page the walk waits for is taken first; the walk then asks.
          if (index !== pages.length - 1) askAhead();
        }),
      );
    }
  };
  try {
    for (let url: URL | undefined = firstUrl; url !== undefined; ) {
      const index = pages.length - 1;
      const fromAhead: boolean = byOffset && index < ahead.length;
      const taken: Read = fromAhead ? await (ahead[index] as Promise<Read>) : await read(url);
      if (!taken.ok) throw taken.error;
      walk.admit(taken.url, taken.page, taken.next);
      pages.push(taken.page);
      const problem = tally.add(taken.page);
      if (problem !== undefined) return { pages, problem };
      const { results, count }: ListedPage = taken.page;
      if (index === -1 && taken.next !== undefined && offsetOf(taken.next) === results.length) {
        // Only a server that pages by plain offset is read by offset; any other follows its links.
        [byOffset, pageSize, planned] = [true, results.length, Math.ceil(count / results.length) - 1];
      } else if (fromAhead && !isAsPlanned(taken, offsetOf(taken.url), pageSize)) {
        byOffset = false;
        await Promise.all(ahead);
      }
      if (arrived[index + 1] !== true) askAhead();
      url = taken.next;
    }
  } finally {
    byOffset = false;
    await Promise.all(ahead);
  }
  return { pages, problem: tally.finish() };
}

/** Whether a page read by offset links on to the page the read already asked for after it. */
function isAsPlanned(taken: { page: ListedPage; next: URL | undefined }, offset: number, pageSize: number) {
  return (
    taken.next !== undefined &&
    taken.page.results.length === pageSize &&
    offsetOf(taken.next) === offset + pageSize
  );
}

/** What the consistency check needs of a page. */
export interface ListedPage {
  count: number;
  results: readonly { id: number | string }[];
  /** The page's `next` link, absolute or relative. */
  next?: string | null;
}

/** The offset a `next` link asks for (absent: 0), or undefined when it cannot be read. */
function nextOffsetOf(link: string): number | undefined {
  const base = "http://list.invalid/";
  return URL.canParse(link, base) ? offsetOf(new URL(link, base)) : undefined;
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
  const tally = new ListTally();
  for (const page of pages) {
    const problem = tally.add(page);
    if (problem !== undefined) return problem;
  }
  return pages.length === 0 ? undefined : tally.finish();
}

/** The check of findListInconsistency, one page at a time: a read stops at the first page that fails it. */
class ListTally {
  readonly #pageOf = new Map<string, number>();
  #count: number | undefined;
  #pages = 0;
  #read = 0;

  /** Adds the next page; what does not add up so far, or undefined. */
  add(page: ListedPage): string | undefined {
    this.#pages += 1;
    const number = this.#pages;
    if (this.#count === undefined) this.#count = page.count;
    else if (page.count !== this.#count) {
      return `the count went from ${this.#count} to ${page.count} between pages ${number - 1} and ${number}`;
    }
    for (const { id } of page.results) {
      this.#read += 1;
      // Project ids may come as numbers or strings: 7 and "7" are one project.
      const key = String(id);
      const earlier = this.#pageOf.get(key);
      if (earlier !== undefined) {
        return `id ${key} is listed ${earlier === number ? `twice on page ${earlier}` : `on pages ${earlier} and ${number}`}`;
      }
      this.#pageOf.set(key, number);
    }
    // The service builds `next` from the count (null once offset + limit reaches it): a link to
    // an offset at or past it announces records beyond the count, like a page holding them.
    const next = page.next === undefined || page.next === null ? undefined : nextOffsetOf(page.next);
    if (this.#read <= this.#count && (next === undefined || next < this.#count)) return undefined;
    return `records were listed beyond the count of ${this.#count}`;
  }

  /** After the last page: whether the records read are as many as the count. */
  finish(): string | undefined {
    const count = this.#count ?? 0;
    if (this.#read === count) return undefined;
    return `${this.#read} ${this.#read === 1 ? "record was" : "records were"} listed for a count of ${count}`;
  }
}

/** The items of a list shape. */
export type ListItem<S extends "recordPage" | "projectPage"> = ResponseShapes[S]["results"][number];

/**
 * Every item of a whole list (a family, the project list), from one read whose pages add up (see
 * readListPages and findListInconsistency), bounded in records and time. A read that does not add
 * up is thrown away and the list read again from its first page, after a short backoff, up to
 * LIST_READ_ATTEMPTS reads; then list_changed_during_read. Nothing of a read is handed over before
 * the whole of it is checked, so no caller can act on part of an inconsistent list.
 */
export async function listItems<S extends "recordPage" | "projectPage">(
  client: ApiClient,
  firstUrl: URL,
  shape: S,
): Promise<ListItem<S>[]> {
  // One time bound for the whole of it, re-reads and their backoff included.
  const walk = new ListWalk(client, firstUrl, true);
  for (let read = 1; ; read += 1) {
    const { pages, problem } = await readListPages(client, firstUrl, shape, walk);
    if (problem === undefined) {
      const items: ListItem<S>[] = [];
      for (const page of pages) appendAll(items, page.results);
      return items;
    }
    if (read >= LIST_READ_ATTEMPTS) {
      throw new ServiceError("list_changed_during_read", client.describeRequest("GET", firstUrl), {
        reads: read,
        problem: problem,
      });
    }
    client.traceLine(
      `GET ${firstUrl.pathname}${firstUrl.search}: the list changed while it was read (${problem}); reading it again (${read + 1}/${LIST_READ_ATTEMPTS})`,
    );
    await client.sleep(client.backoffDelayMs(read));
  }
}
