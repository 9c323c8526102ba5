// Runs the emulator in a worker thread of the benchmark's process: still in-process (its memory
// counts in the peak RSS), but its CPU no longer queues behind the client's on one event loop, as
// a real service's would not.

import { Worker } from "node:worker_threads";
import type { EmulatorOptions, FaultOptions, RequestLogEntry } from "../src/emulator/index.js";

export type ThreadRequest =
  | { type: "start"; options: EmulatorOptions }
  | { type: "log"; from: number }
  | { type: "faults"; faults: FaultOptions }
  | { type: "close" };
export type ThreadReply =
  | { type: "ready"; url: string }
  | { type: "log"; entries: RequestLogEntry[] }
  | { type: "faults" }
  | { type: "closed" };

export interface EmulatorThread {
  url: string;
  /** The requests served since entry `from` (0: all). */
  requestLog(from?: number): Promise<RequestLogEntry[]>;
  setFaults(faults: FaultOptions): Promise<void>;
  close(): Promise<void>;
}

export async function startEmulatorThread(options: EmulatorOptions): Promise<EmulatorThread> {
  const worker = new Worker(new URL("./emulator-worker.js", import.meta.url));
  // One question at a time: each reply answers the oldest pending question.
  const pending: Array<(reply: ThreadReply) => void> = [];
  let failure: Error | undefined;
  const ready = new Promise<string>((resolve, reject) => {
    pending.push((reply) => {
      if (reply.type === "ready") resolve(reply.url);
      else reject(new Error(`emulator thread: unexpected ${reply.type}`));
    });
    worker.once("error", (error) => {
      failure = error;
      reject(error);
      for (const waiter of pending.splice(0)) waiter({ type: "closed" });
    });
  });
  worker.on("message", (reply: ThreadReply) => pending.shift()?.(reply));

  const ask = (request: ThreadRequest): Promise<ThreadReply> => {
    if (failure) return Promise.reject(failure);
    return new Promise((resolve) => {
      pending.push(resolve);
      worker.postMessage(request);
    });
  };

  worker.postMessage({ type: "start", options } satisfies ThreadRequest);
  const url = await ready;
  return {
    url,
    async requestLog(from = 0) {
      const reply = await ask({ type: "log", from });
      if (reply.type !== "log") throw failure ?? new Error("emulator thread: no request log");
      return reply.entries;
    },
    async setFaults(faults) {
      await ask({ type: "faults", faults });
    },
    async close() {
      await ask({ type: "close" });
      await worker.terminate();
    },
  };
}
