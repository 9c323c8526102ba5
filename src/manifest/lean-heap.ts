// A process about to hold a big manifest's data trades a little speed for memory. While a program
// allocates fast, V8 lets its heap grow to several times what is live before it collects. With the
// heap let grow only a fifth past what is live, `validate` of a 60 MB manifest peaks at about
// 460 MB instead of 540 MB, and takes about a tenth longer (bench/README.md, validate-60mb).
// Small manifests, by far the usual case, are left with V8's defaults.

import { setFlagsFromString } from "node:v8";

/** Manifest text (all files together) from which the heap is kept near its live size. */
const LEAN_HEAP_FROM_BYTES = 8 * 1024 * 1024;

/** How far past its live size the heap may grow before V8 collects, in percent. */
const HEAP_GROWING_PERCENT = 20;

let lean = false;

/** Keeps the heap near its live size from now on, when `textLength` characters of manifest are to be held. */
export function keepHeapLeanFor(textLength: number): void {
  if (lean || textLength < LEAN_HEAP_FROM_BYTES) return;
  lean = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
