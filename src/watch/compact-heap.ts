// Between two cycles a watcher has nothing to do until the next interval: a full garbage collection
// then gives the heap back to what is still live. Without it, V8 keeps each cycle's garbage until its
// old generation reaches a limit that grows with use: a cycle's read state lives through the cycle,
// so it is promoted to the old generation before it dies, and V8 only shrinks an idle heap after
// seconds without work, which cycles close together never leave. The resident memory of a long-running
// watcher then climbs for its first hundreds of cycles without anything leaking (the heap after a
// collection stays the same); collected after each cycle, it stays where it was after the first ten.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let collect: (() => void) | undefined;

/** Collects the garbage of the cycle that just ended: the full collection V8 makes on request. */
export function compactHeap(): void {
  // The flag only adds `gc` to contexts made after it is set (the main one is left as it is): it
  // is exposed once, to a context of its own, unless node runs with --expose-gc already.
  if (collect === undefined) setFlagsFromString("--expose-gc");
  collect ??= (globalThis as { gc?: () => void }).gc ?? (runInNewContext("gc") as () => void);
  collect();
}
