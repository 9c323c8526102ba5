// The journal of a run's writes says only what was sent: a write's intent goes on disk once the
// write has a connection, just before it leaves, so a write still queued when the run stops has
// none, and a resume or rollback never waits for a write that never left.

import { afterEach, describe, expect, it } from "vitest";
import {
  RecordWriter,
  type WriteIntent,
  type WriteJournal,
  type WriteOutcome,
} from "../../src/apply/record-writer.js";
import {
  record,
  type ScriptedServer,
  sendJson,
  startScriptedServer,
  testClient,
} from "../support/scripted-server.js";

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A journal in memory: each intent as it came, with how many requests the server had by then. */
function memoryJournal(requestsSoFar: () => number) {
  const intents: { intent: WriteIntent; requestsBefore: number }[] = [];
  const outcomes = new Map<number, WriteOutcome>();
  const journal: WriteJournal = {
    async intend(intent) {
      intents.push({ intent, requestsBefore: requestsSoFar() });
      return intents.length;
    },
    recordOutcome(seq, outcome) {
      outcomes.set(seq, outcome);
    },
  };
  return { journal, intents, outcomes };
}

describe("a journaled write", () => {
  it("is journaled when it leaves, not while it waits for a connection: a stop leaves no intent for a queued write", async () => {
    const held: Array<() => void> = [];
    server = await startScriptedServer((request, response) => {
      const id = Number(request.url.split("/").at(-2));
      held.push(() => sendJson(response, 200, record(id, { enabled: false })));
    });
    const stop = new AbortController();
    const { client } = testClient(server.url, { concurrency: 1, signal: stop.signal });
    const sent = () => server?.requests.length ?? 0;
    const { journal, intents, outcomes } = memoryJournal(sent);
    const writer = new RecordWriter(client, journal);
    const writes = [1, 2, 3].map((id) =>
      writer.update("update", "1", "plugin_configs", id, { enabled: false }).then(
        () => "done",
        (error: unknown) => (error as { code?: string }).code ?? String(error),
      ),
    );
    // One connection: the first write leaves, the other two wait for it.
    await expect.poll(() => held.length).toBe(1);
    expect(intents.map(({ intent }) => intent.id)).toEqual([1]);
    expect(intents[0]?.requestsBefore).toBe(0);
    stop.abort();
    held[0]?.();
    expect(await Promise.all(writes)).toEqual(["done", "request_aborted", "request_aborted"]);
    // Only the write that was sent is in the journal, with its answer.
    expect(intents.map(({ intent }) => intent.id)).toEqual([1]);
    expect([...outcomes.entries()]).toEqual([[1, expect.objectContaining({ status: "done" })]]);
    expect(sent()).toBe(1);
    await client.close();
  });

  it("is journaled before it leaves, also when the connection is free, and a retried write once", async () => {
    let answers = 0;
    server = await startScriptedServer((_request, response) => {
      answers += 1;
      // The first attempt is refused with a 503: sent again, under the same intent.
      if (answers === 1) sendJson(response, 503, { detail: "busy" });
      else sendJson(response, 200, record(7, { enabled: false }));
    });
    const { client } = testClient(server.url);
    const { journal, intents, outcomes } = memoryJournal(() => server?.requests.length ?? 0);
    const writer = new RecordWriter(client, journal);
    await writer.update("update", "1", "plugin_configs", 7, { enabled: false });
    expect(intents).toEqual([expect.objectContaining({ requestsBefore: 0 })]);
    expect(server.requests).toHaveLength(2);
    expect(outcomes.get(1)?.status).toBe("done");
    await client.close();
  });

  it("a create's reads before its POST do not journal it; its POST does", async () => {
    server = await startScriptedServer((request, response) => {
      if (request.method === "GET")
        sendJson(response, 200, { count: 0, next: null, previous: null, results: [] });
      else sendJson(response, 201, record(9, { name: "new" }));
    });
    const { client } = testClient(server.url);
    const { journal, intents } = memoryJournal(() => server?.requests.length ?? 0);
    const writer = new RecordWriter(client, journal);
    await writer.create("1", "plugin_configs", { name: "new", plugin: 12, enabled: true }, {});
    const posts = server.requests.findIndex((request) => request.method === "POST");
    expect(intents).toHaveLength(1);
    expect(intents[0]?.requestsBefore).toBe(posts);
    await client.close();
  });
});
