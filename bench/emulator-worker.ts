// The worker side of emulator-thread.ts: runs the emulator on its own event loop and answers the
// benchmark's requests for its request log.

import { parentPort } from "node:worker_threads";
import { type RunningEmulator, startEmulator } from "../src/emulator/index.js";
import type { ThreadReply, ThreadRequest } from "./emulator-thread.js";

const port = parentPort;
if (!port) throw new Error("emulator-worker runs only as a worker thread");

let emulator: RunningEmulator | undefined;

/** With --expose-gc (the benchmark's child processes), drops the start-up garbage before measuring. */
function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
const reply = (message: ThreadReply) => port.postMessage(message);

port.on("message", async (message: ThreadRequest) => {
  if (message.type === "start") {
    // The options (and their copy of the fleet) arrive as a message, not as workerData, so that
    // nothing keeps them alive once the emulator has made its own state of them.
    emulator = await startEmulator(message.options);
    collectGarbage();
    reply({ type: "ready", url: emulator.url });
  } else if (message.type === "faults") {
    emulator?.setFaults(message.faults);
    reply({ type: "faults" });
  } else if (message.type === "log") {
    reply({ type: "log", entries: emulator?.requestLog.slice(message.from) ?? [] });
  } else {
    await emulator?.close();
    reply({ type: "closed" });
    port.close();
  }
});
