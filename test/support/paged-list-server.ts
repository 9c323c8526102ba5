// A list served by limit/offset pages as the service does, with the quirks a test scripts per
// request (a capped page size, short pages, a lying count, failures, late answers), counting the
// requests in flight at once so tests can check how many pages were asked for together.

import type { ServerResponse } from "node:http";
import { page, type ScriptedServer, sendJson, startScriptedServer } from "./scripted-server.js";

export interface PageRequestSeen {
  /** The request's number, from 0, in arrival order. */
  index: number;
  limit: number;
  offset: number;
  /** Path and query as sent. */
  url: string;
}

export interface PagedListScript {
  /** The server serves at most this many records per page, whatever was asked. */
  cap?: number;
  /** How many records a page serves (below the limit): a short page, linked on from its end. */
  shortPage?: (request: PageRequestSeen) => number | undefined;
  /** Adds this to the `count` of every page. */
  countError?: number;
  /** Answers this status (503, 429 with Retry-After 0, 500) instead of the page. */
  fail?: (request: PageRequestSeen) => number | undefined;
  /** Milliseconds before the answer: reorders answers of pages asked at once. */
  delayMs?: (request: PageRequestSeen) => number;
  /** Replaces the `next` link a page gives. */
  nextLink?: (request: PageRequestSeen, next: string | null) => string | null;
  /**
   * Holds every answer but a first page's (offset 0) until this many requests are in flight at once
   * (or 5 s have passed), once: a test of pages asked together then does not depend on how fast a
   * loaded machine sends them.
   */
  holdUntilInFlight?: number;
  /** Runs once the page is served (its records taken): changes the list between pages. */
  afterServing?: (request: PageRequestSeen, items: unknown[]) => void;
}

export interface PagedListServer {
  url: string;
  server: ScriptedServer;
  items: unknown[];
  script: PagedListScript;
  /** Every page request, in arrival order. */
  seen: PageRequestSeen[];
  /** The most requests the server held unanswered at once. */
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startPagedListServer(
  items: unknown[],
  script: PagedListScript = {},
): Promise<PagedListServer> {
  const seen: PageRequestSeen[] = [];
  let inFlight = 0;
  // Answers waiting for script.holdUntilInFlight; undefined once released (then none are held).
  let held: (() => void)[] | undefined = [];
  const releaseHeld = () => {
    const waiting = held ?? [];
    held = undefined;
    clearTimeout(fallback);
    for (const send of waiting) send();
  };
  const fallback = setTimeout(releaseHeld, 5000);
  fallback.unref();
  const state: PagedListServer = {
    url: "",
    server: undefined as unknown as ScriptedServer,
    items,
    script,
    seen,
    maxInFlight: 0,
    close: () => {
      releaseHeld();
      return state.server.close();
    },
  };
  const answer = (request: PageRequestSeen, response: ServerResponse) => {
    const current = state.script;
    const status = current.fail?.(request);
    if (status === 429) return sendJson(response, 429, { detail: "slow down" }, { "retry-after": "0" });
    if (status !== undefined) return sendJson(response, status, { detail: "failed" });
    const served = Math.min(
      request.limit,
      current.cap ?? request.limit,
      current.shortPage?.(request) ?? request.limit,
    );
    const results = state.items.slice(request.offset, request.offset + served);
    const end = request.offset + results.length;
    let next: string | null = null;
    if (end < state.items.length && results.length > 0) {
      const link = new URL(request.url, state.url);
      link.searchParams.set("limit", String(Math.min(request.limit, current.cap ?? request.limit)));
      link.searchParams.set("offset", String(end));
      next = link.href;
    }
    if (current.nextLink) next = current.nextLink(request, next);
    const count = state.items.length + (current.countError ?? 0);
    current.afterServing?.(request, state.items);
    sendJson(response, 200, page(results, next, count));
  };
  state.server = await startScriptedServer((recorded, response) => {
    const url = new URL(recorded.url, "http://x");
    const request: PageRequestSeen = {
      index: seen.length,
      limit: Number(url.searchParams.get("limit") ?? 100),
      offset: Number(url.searchParams.get("offset") ?? 0),
      url: recorded.url,
    };
    seen.push(request);
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    response.on("close", () => {
      inFlight -= 1;
    });
    const delay = state.script.delayMs?.(request) ?? 1;
    // Even pages answered at once are held a moment, so pages asked together overlap here.
    const send = () => {
      setTimeout(() => answer(request, response), delay);
    };
    const hold = state.script.holdUntilInFlight;
    if (hold === undefined || held === undefined || request.offset === 0) {
      send();
      return;
    }
    held.push(send);
    if (inFlight >= hold) releaseHeld();
  });
  state.url = state.server.url;
  return state;
}
