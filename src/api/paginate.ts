// Pagination as an async iterator over the list envelope. It follows `next` only under the base
// URL (the key goes nowhere else) and stops a service that would page forever.

import type { ApiClient } from "./client.js";
import { ForeignNextLinkError, MalformedResponseError, PaginationLoopError } from "./errors.js";
import { secrets } from "./redact.js";
import type { PageShape, ResponseShapes } from "./validate-response.js";

/**
 * Yields each page from `firstUrl` on. The caller puts `limit` in `firstUrl`; later pages are the
 * service's `next` links as given.
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
      if (!client.isUnderBase(next)) {
        throw new ForeignNextLinkError(described, `${next.origin}${next.pathname}`, client.base.display);
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
