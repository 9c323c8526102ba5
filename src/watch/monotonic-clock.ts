// The clock every wait, window and deadline of `watch` is measured on. The wall clock steps (an NTP
// correction, a VM resumed, an operator's `date -s`): measured on it, a settle window, the rollout
// hold or the loop's next due time ends early or late by the step. Milliseconds since the process
// started, never going back; wall-clock times stay for what is shown or sent (log lines, events,
// metrics' timestamps, journal names).

/** Now, in milliseconds on the monotonic clock (comparable only with itself, within this process). */
export function monotonicNow(): number {
  return performance.now();
}
