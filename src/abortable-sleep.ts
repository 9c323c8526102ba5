// Waiting that an interrupted run does not sit through: a sleep that ends (rejecting with the
// signal's reason) as soon as the signal aborts, whatever sleep function was injected.

import { setTimeout as delay } from "node:timers/promises";

/** A sleep as the client and limiter take it: injected sleeps may ignore the signal. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The real sleep: its timer is cleared on abort, so it does not keep the process alive. */
export const realSleep: Sleep = async (ms, signal) => {
  await delay(ms, undefined, signal === undefined ? undefined : { signal });
};

/** Sleeps `ms`; rejects with the signal's reason once it aborts (at once if it already has). */
export function sleepUnlessAborted(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    sleep(ms, signal).then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(signal.aborted ? signal.reason : error);
      },
    );
  });
}
