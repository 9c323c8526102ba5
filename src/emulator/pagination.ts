// limit/offset pagination as the real service does it: default 100, no maximum, absolute
// next/previous links built from the request's own URL, null at the ends.

import type { Page } from "../wire-types.js";
import { validationError } from "./http-error.js";

export const DEFAULT_PAGE_SIZE = 100;

export interface PageRequest {
  limit: number;
  offset: number;
}

function parseIntegerParam(query: URLSearchParams, name: string, minimum: number, fallback: number) {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^-?[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw validationError("invalid_input", "A valid integer is required.", name);
  }
  const value = Number(raw);
  if (value < minimum) {
    throw validationError("min_value", `Ensure this value is greater than or equal to ${minimum}.`, name);
  }
  return value;
}

export function parsePageRequest(query: URLSearchParams): PageRequest {
  return {
    limit: parseIntegerParam(query, "limit", 1, DEFAULT_PAGE_SIZE),
    offset: parseIntegerParam(query, "offset", 0, 0),
  };
}

/** Links then carry the capped limit. */
export function capPageSize(requestUrl: URL, maxPageSize: number | undefined): URL {
  const limit = requestUrl.searchParams.get("limit");
  const asked = limit === null ? DEFAULT_PAGE_SIZE : Number(limit);
  // A limit that is not a number stays as sent, for the 400 it earns.
  if (maxPageSize !== undefined && asked > maxPageSize)
    requestUrl.searchParams.set("limit", String(maxPageSize));
  return requestUrl;
}

function linkTo(requestUrl: URL, limit: number, offset: number | undefined): string {
  const url = new URL(requestUrl.href);
  url.searchParams.set("limit", String(limit));
  if (offset === undefined) url.searchParams.delete("offset");
  else url.searchParams.set("offset", String(offset));
  return url.href;
}

/** Links keep the request's other query parameters. */
export function paginate<T>(items: readonly T[], page: PageRequest, requestUrl: URL): Page<T> {
  return paginateCounted(items.length, (start, end) => items.slice(start, end), page, requestUrl);
}

/** For a list too long to hold (a synthesized log): `slice` makes only the page's items. */
export function paginateCounted<T>(
  count: number,
  slice: (start: number, end: number) => T[],
  page: PageRequest,
  requestUrl: URL,
): Page<T> {
  const { limit, offset } = page;
  const next = offset + limit >= count ? null : linkTo(requestUrl, limit, offset + limit);
  // Like the real service, the first page is linked without an offset at all.
  const previous =
    offset > 0 ? linkTo(requestUrl, limit, offset - limit > 0 ? offset - limit : undefined) : null;
  const results = offset >= count ? [] : slice(offset, Math.min(count, offset + limit));
  return { count, next, previous, results };
}
