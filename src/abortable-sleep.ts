// Waiting that an interrupted run does not sit through: a sleep that ends (rejecting with the
// signal's reason) as soon as the signal aborts, whatever sleep function was injected; and timers of
// any length (a bake of weeks, a watch interval of a month), which Node's own end at once beyond
// about 24.8 days.

/** A sleep as the client and limiter take it: injected sleeps may ignore the signal. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The longest delay one Node timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fire` once `ms` have passed, however long (longer timers are chained); returns the cancel. */
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

/** The real sleep, of any length: its timer is cleared on abort, so it does not keep the process alive. */
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

/** Sleeps `ms`; rejects with the signal's reason once it aborts (at once if it already has). */
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
