// The clock every wait and deadline of `watch` is measured on: the wall clock steps (NTP, a resumed VM),
// and would end them early or late. Wall-clock times stay for what is shown or sent.

export function monotonicNow(): number {
  return performance.now();
}
