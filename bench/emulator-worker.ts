// The worker side of emulator-thread.ts: runs the emulator on its own event loop and answers the
// benchmark's questions (its request log, its faults, which request it has just served).

import { parentPort } from "node:worker_threads";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";
import type { RequestMatch, ThreadReply, ThreadRequest } from "./emulator-thread.js";

const port = parentPort;
if (!port) throw new Error("emulator-worker runs only as a worker thread");

let emulator: RunningEmulator | undefined;
/** Questions "tell me when a request like this is served", by question id. */
const awaited = new Map<number, RequestMatch>();
/** How many entries of the request log have been checked against `awaited`. */
let checked = 0;

/** With --expose-gc (the benchmark's child processes), drops the start-up garbage before measuring. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
const reply = (message: ThreadReply) => port.postMessage(message);

/**
 * The emulator's log hook: it runs right after each response is written and its entry pushed to the
 * request log (and for internal errors, which have no entry of their own and go to stderr).
 */
function onLogLine(line: string): void {
  const log = emulator?.requestLog;
  if (log === undefined || log.length === checked) {
    process.stderr.write(`${line}\n`);
    return;
  }
  const servedAt = performance.timeOrigin + performance.now();
  for (; checked < log.length; checked += 1) {
    const entry = log[checked];
    if (entry === undefined) continue;
    for (const [id, match] of awaited) {
      if (
        entry.method === match.method &&
        entry.path.startsWith(match.pathPrefix) &&
        (match.status === undefined || entry.status === match.status)
      ) {
        awaited.delete(id);
        reply({ id, type: "served", entry, servedAt });
      }
    }
  }
}

port.on("message", async (message: ThreadRequest) => {
  const { id } = message;
  if (message.type === "start") {
    // The options (and their copy of the fleet) arrive as a message, not as workerData, so that
    // nothing keeps them alive once the emulator has made its own state of them.
    emulator = await startEmulator({ ...message.options, log: onLogLine });
    collectGarbage();
    reply({ id, type: "ready", url: emulator.url });
  } else if (message.type === "faults") {
    emulator?.setFaults(message.faults);
    reply({ id, type: "faults" });
  } else if (message.type === "log") {
    reply({ id, type: "log", entries: emulator?.requestLog.slice(message.from) ?? [] });
  } else if (message.type === "served") {
    // Only requests served from now on: skip what the log holds already.
    checked = emulator?.requestLog.length ?? 0;
    awaited.set(id, message.match);
  } else {
    await emulator?.close();
    reply({ id, type: "closed" });
    port.close();
  }
});
