// The list readers: a whole list (listItems) is handed over only once its pages add up to one state
// of it, read again if it changed; a stream (paginate: logs) page by page as it is read.
import { appendAll } from "../append-all.js";
import type { ApiClient } from "./client.js";
import { ListWalk, offsetOf, type PageAndNext } from "./list-walk.js";
import type { PageShape, ResponseShapes } from "./response-schemas.js";
import { ServiceError } from "./service-error.js";

/** The first read included. */
export const LIST_READ_ATTEMPTS = 3;

/**
 * The pages of a stream (logs), each handed over as read, not checked against the others; the time
 * bound counts the time spent reading, not the time the caller spends between pages.
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

/** Kept until the walk reaches it: see readListPages. */
type PageRead<P> = { ok: true; url: URL; page: P; next: URL | undefined } | { ok: false; error: unknown };

/** `problem`: why the pages are not one state of the list (the read stopped there). */
interface ListRead<P> {
  pages: P[];
  problem: string | undefined;
}

/**
 * One read of a list, taken as a walk along `next` takes them. Once the first page shows plain
 * offset paging (and the page size the server keeps to), later pages are asked ahead by offset, at
 * most the concurrency at once and twice that ahead of the walk (a slow page holds the askers, not
 * the memory of all pages after it); from a page not as planned, `next` is followed one at a time.
 * A page's error surfaces only if the walk reaches it, so a read fails as the walk would have. The
 * read stops at the first page that cannot add up, so a server repeating its pages is asked for a
 * few pages, not its count's worth.
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

/** Whether a page read by offset links on to the page already asked for after it. */
function isAsPlanned(taken: { page: ListedPage; next: URL | undefined }, offset: number, pageSize: number) {
  return (
    taken.next !== undefined &&
    taken.page.results.length === pageSize &&
    offsetOf(taken.next) === offset + pageSize
  );
}

export interface ListedPage {
  count: number;
  results: readonly { id: number | string }[];
  /** Absolute or relative. */
  next?: string | null;
}

/** Undefined when the link cannot be read. */
function nextOffsetOf(link: string): number | undefined {
  const base = "http://list.invalid/";
  return URL.canParse(link, base) ? offsetOf(new URL(link, base)) : undefined;
}

/**
 * Why the pages of one read do not add up to one state of the list: `count` the same on every page,
 * every id once, as many records as `count`. A delete, insert or reorder between pages breaks one
 * of these (with `count` steady a skip implies a repeat); even one page can disagree with itself,
 * as `count` and records are two queries. Not seen: a delete behind the read and an insert ahead of
 * it between the same two pages; apply's dedupe after its creates catches a create planned from it.
 */
export function findListInconsistency(pages: readonly ListedPage[]): string | undefined {
  const tally = new ListTally();
  for (const page of pages) {
    const problem = tally.add(page);
    if (problem !== undefined) return problem;
  }
  return pages.length === 0 ? undefined : tally.finish();
}

/** findListInconsistency one page at a time: a read stops at the first page that fails it. */
class ListTally {
  readonly #pageOf = new Map<string, number>();
  #count: number | undefined;
  #pages = 0;
  #read = 0;

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
    // `next` is built from the count: a link at or past it announces records beyond the count.
    const next = page.next === undefined || page.next === null ? undefined : nextOffsetOf(page.next);
    if (this.#read <= this.#count && (next === undefined || next < this.#count)) return undefined;
    return `records were listed beyond the count of ${this.#count}`;
  }

  finish(): string | undefined {
    const count = this.#count ?? 0;
    if (this.#read === count) return undefined;
    return `${this.#read} ${this.#read === 1 ? "record was" : "records were"} listed for a count of ${count}`;
  }
}

export type ListItem<S extends "recordPage" | "projectPage"> = ResponseShapes[S]["results"][number];

/**
 * Every item of a whole list, from one read whose pages add up, re-read after a short backoff up to
 * LIST_READ_ATTEMPTS times: no caller can act on part of an inconsistent list.
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
