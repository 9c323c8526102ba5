// Module hooks (they run on the loader's own thread): the load of one module waits, so a test can
// send a signal at a known point of pcsync's start, while the main thread waits for that import.

import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

let suffix;
let marker;

export function initialize(data) {
  suffix = data.suffix;
  marker = data.marker;
}

export async function load(url, context, nextLoad) {
  if (suffix !== undefined && url.endsWith(suffix)) {
    appendFileSync(marker, "held\n");
    await sleep(60_000);
  }
  return nextLoad(url, context);
}
