// A process about to hold a big manifest's data trades a little speed for memory: V8's heap is let
// grow only a fifth past what is live. Small manifests, the usual case, keep V8's defaults.

import { setFlagsFromString } from "node:v8";

/** Manifest text (all files together) from which the heap is kept lean. */
const LEAN_HEAP_FROM_BYTES = 8 * 1024 * 1024;

// `validate` of a 60 MB manifest then peaks at about 460 MB instead of 540 MB, and takes about a
// tenth longer (bench/README.md, validate-60mb).
const HEAP_GROWING_PERCENT = 20;

let lean = false;

export function keepHeapLeanFor(textLength: number): void {
  if (lean || textLength < LEAN_HEAP_FROM_BYTES) return;
  lean = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
