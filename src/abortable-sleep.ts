// Sleeps that end as soon as the signal aborts, whatever sleep was injected; and timers of any length
// (a bake of weeks), which Node's own fire at once beyond about 24.8 days.

/** Injected sleeps may ignore the signal. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Returns the cancel. */
export function setLongTimeout(fire: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = (left: number) => {
    timer = setTimeout(
      () => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fire()),
      Math.min(Math.max(0, left), MAX_TIMER_MS),
    );
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** Its timer is cleared on abort, so it does not keep the process alive. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = setLongTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export function sleepUnlessAborted(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return sleep(ms);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    sleep(ms, signal)
      .finally(() => signal.removeEventListener("abort", onAbort))
      .then(resolve, (error: unknown) => reject(signal.aborted ? signal.reason : error));
  });
}
