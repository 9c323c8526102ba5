// A scripted service holding project 1's plugin_configs in memory, for the late-write and interrupt
// tests: each test decides when a POST commits and whether (and when) it is answered, and the
// server records when every request arrived, so tests can check what the client sent and when.

import type { ServerResponse } from "node:http";
import { type RecordedRequest, record, sendJson, startScriptedServer } from "./scripted-server.js";

export const LIST = /^\/api\/projects\/1\/(plugin_configs|pipeline_frontend_apps_configs)\/(\?.*)?$/;
const ONE = /^\/api\/projects\/1\/plugin_configs\/(\d+)\/$/;

export type StoredRecord = Record<string, unknown> & { id: number; name: string };

export interface PostContext {
  /** 0 for the first POST the server received. */
  index: number;
  request: RecordedRequest;
  response: ServerResponse;
  /** Stores the record (once; later calls return the same record). */
  commit(): StoredRecord;
  /** Answers 201 with the record, if the client is still there. */
  answer(stored: StoredRecord): void;
  /** Resolves when the client hangs up (it gave up waiting), or at once if it has. */
  clientGone: Promise<void>;
}

export interface FamilyServerOptions {
  /** How a POST is handled; by default it commits and answers at once. */
  onPost?: (post: PostContext) => void;
  /** Takes a request before the service does (returns true when it handled it). */
  intercept?: (request: RecordedRequest, response: ServerResponse) => boolean;
}

export interface Arrival {
  method: string;
  url: string;
  at: number;
}

export interface FamilyServer {
  url: string;
  /** Live records (deleted ones leave). */
  records: StoredRecord[];
  /** Every request, with the time (Date.now) it arrived. */
  arrivals: Arrival[];
  /** Records committed by POSTs, deleted since or not. */
  committed: StoredRecord[];
  /** Stops answering: every open connection is destroyed and new ones are refused. */
  goAway(): Promise<void>;
  close(): Promise<void>;
}

export async function startFamilyServer(options: FamilyServerOptions = {}): Promise<FamilyServer> {
  const records: StoredRecord[] = [];
  const committed: StoredRecord[] = [];
  const arrivals: Arrival[] = [];
  let nextId = 100;
  let posts = 0;
  const onPost =
    options.onPost ??
    ((post: PostContext) => {
      post.answer(post.commit());
    });
  const server = await startScriptedServer((request, response, raw) => {
    arrivals.push({ method: request.method, url: request.url, at: Date.now() });
    if (options.intercept?.(request, response)) return;
    if (request.method === "GET" && LIST.test(request.url)) {
      const family = LIST.exec(request.url)?.[1];
      const results = family === "plugin_configs" ? records : [];
      return sendJson(response, 200, { count: results.length, next: null, previous: null, results });
    }
    if (request.method === "POST" && LIST.test(request.url)) {
      let stored: StoredRecord | undefined;
      const clientGone = new Promise<void>((resolve) => {
        if (raw.socket?.destroyed) resolve();
        response.on("close", () => resolve());
      });
      onPost({
        index: posts++,
        request,
        response,
        clientGone,
        commit() {
          if (!stored) {
            stored = record(nextId++, {
              ...(JSON.parse(request.body) as object),
              deleted: false,
            }) as StoredRecord;
            records.push(stored);
            committed.push(stored);
          }
          return stored;
        },
        answer(answered) {
          if (!response.destroyed && !response.headersSent) sendJson(response, 201, answered);
        },
      });
      return;
    }
    const one = ONE.exec(request.url);
    if (request.method === "PATCH" && one) {
      const index = records.findIndex((item) => item.id === Number(one[1]));
      const existing = records[index];
      if (!existing) {
        return sendJson(response, 404, {
          type: "invalid_request",
          code: "not_found",
          detail: "Not found.",
          attr: null,
        });
      }
      const updated = { ...existing, ...(JSON.parse(request.body) as object) } as StoredRecord;
      if (updated.deleted === true) records.splice(index, 1);
      else records[index] = updated;
      return sendJson(response, 200, updated);
    }
    sendJson(response, 404, { type: "invalid_request", code: "not_found", detail: "Not found.", attr: null });
  });
  let gone = false;
  return {
    url: server.url,
    records,
    arrivals,
    committed,
    async goAway() {
      if (gone) return;
      gone = true;
      await server.close();
    },
    async close() {
      if (gone) return;
      gone = true;
      await server.close();
    },
  };
}

/** How many live records have each name. */
export function countByName(records: readonly StoredRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stored of records) counts.set(stored.name, (counts.get(stored.name) ?? 0) + 1);
  return counts;
}
