// Runs the emulator in a worker thread of the benchmark's process: still in-process (its memory
// counts in the peak RSS), but its CPU no longer queues behind the client's on one event loop, as
// a real service's would not.

import { Worker } from "node:worker_threads";
import type { EmulatorOptions, FaultOptions, RequestLogEntry } from "../src/emulator/index.js";

/** Which served request to wait for: its method, the start of its target, and its status if given. */
export interface RequestMatch {
  method: string;
  pathPrefix: string;
  status?: number;
}

/** A request the emulator has served, and when (epoch ms, fractional: comparable across threads). */
export interface ServedRequest {
  entry: RequestLogEntry;
  servedAt: number;
}

type Question =
  | { type: "start"; options: EmulatorOptions }
  | { type: "log"; from: number }
  | { type: "faults"; faults: FaultOptions }
  | { type: "served"; match: RequestMatch }
  | { type: "close" };
type Answer =
  | { type: "ready"; url: string }
  | { type: "log"; entries: RequestLogEntry[] }
  | { type: "faults" }
  | ({ type: "served" } & ServedRequest)
  | { type: "closed" };
/** Each question carries an id, and its answer the same: answers may come in any order. */
export type ThreadRequest = Question & { id: number };
export type ThreadReply = Answer & { id: number };

export interface EmulatorThread {
  url: string;
  /** The requests served since entry `from` (0: all). */
  requestLog(from?: number): Promise<RequestLogEntry[]>;
  /**
   * Resolves as soon as the emulator has served a request that matches, among those it serves
   * from now on (the answer leaves the emulator's thread right after the response is written);
   * rejects if the emulator closes first.
   */
  whenServed(match: RequestMatch): Promise<ServedRequest>;
  setFaults(faults: FaultOptions): Promise<void>;
  close(): Promise<void>;
}

export async function startEmulatorThread(options: EmulatorOptions): Promise<EmulatorThread> {
  const worker = new Worker(new URL("./emulator-worker.js", import.meta.url));
  const pending = new Map<number, (reply: Answer) => void>();
  let nextId = 0;
  let failure: Error | undefined;
  worker.once("error", (error) => {
    failure = error;
    for (const waiter of pending.values()) waiter({ type: "closed" });
    pending.clear();
  });
  worker.on("message", (reply: ThreadReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    waiter?.(reply);
  });

  const ask = (question: Question): Promise<Answer> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ ...question, id } as ThreadRequest);
    });
  };

  const started = await ask({ type: "start", options });
  if (started.type !== "ready") throw failure ?? new Error(`emulator thread: unexpected ${started.type}`);
  return {
    url: started.url,
    async requestLog(from = 0) {
      const reply = await ask({ type: "log", from });
      if (reply.type !== "log") throw failure ?? new Error("emulator thread: no request log");
      return reply.entries;
    },
    async whenServed(match) {
      const reply = await ask({ type: "served", match });
      if (reply.type !== "served")
        throw failure ?? new Error("emulator thread: closed while waiting for a request");
      return { entry: reply.entry, servedAt: reply.servedAt };
    },
    async setFaults(faults) {
      await ask({ type: "faults", faults });
    },
    async close() {
      await ask({ type: "close" });
      // Whoever still waits for a request will not see it.
      for (const waiter of pending.values()) waiter({ type: "closed" });
      pending.clear();
      await worker.terminate();
    },
  };
}
