// Module hooks (they run on the loader's own thread): the load of one module waits, so a test can
// send a signal at a known point of pcsync's start, while the main thread waits for that import.
// The load goes on after 60 s, or as soon as the release file exists (for a test whose run must
// live on past the signal and be seen doing so).

import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const HOLD_MS = 60_000;
const POLL_MS = 20;

let suffix;
let marker;
let release;

export function initialize(data) {
  suffix = data.suffix;
  marker = data.marker;
  release = data.release;
}

export async function load(url, context, nextLoad) {
  if (suffix !== undefined && url.endsWith(suffix)) {
    appendFileSync(marker, "held\n");
    const until = Date.now() + HOLD_MS;
    while (Date.now() < until && !(release !== undefined && existsSync(release))) await sleep(POLL_MS);
  }
  return nextLoad(url, context);
}
