// What apply says while it runs, on stderr. On a terminal: one line rewritten in place, with the
// time left. Elsewhere (CI, a pipe, a log file): one line per finished change, and every 10 s a
// heartbeat with done/total, the time so far and the time left, so that a long apply is never
// silent. The clock and the timer are injected, so tests need not wait.

import type { ApplyOutcome } from "../apply/types.js";
import { describeOutcomeLine, describePace, describeTiming } from "../render/outcome-line.js";
import type { CliIo } from "./cli-io.js";
import { createProgress, showsProgressLine } from "./progress.js";

export const HEARTBEAT_MS = 10_000;

export interface ApplyProgressClock {
  now: () => number;
  /** Calls `tick` every `ms` until the returned function is called. */
  every: (ms: number, tick: () => void) => () => void;
}

const systemClock: ApplyProgressClock = {
  now: () => Date.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    // A heartbeat must never keep the process alive on its own.
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface ApplyProgress {
  onOutcome(done: number, total: number, outcome: ApplyOutcome): void;
  finish(): void;
}

export function createApplyProgress(
  io: CliIo,
  total: number,
  options: { clock?: ApplyProgressClock; heartbeatMs?: number } = {},
): ApplyProgress {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  let done = 0;
  const elapsed = () => clock.now() - started;

  if (showsProgressLine(io)) {
    const line = createProgress(io);
    return {
      onOutcome(finished) {
        done = finished;
        line.update("applied", done, total, `changes, ${describeTiming(done, total, elapsed())}`);
      },
      finish: () => line.finish(),
    };
  }
  const stop = clock.every(options.heartbeatMs ?? HEARTBEAT_MS, () => {
    if (done < total) io.stderr.write(`Still applying: ${describePace(done, total, elapsed())}\n`);
  });
  return {
    onOutcome(finished, _total, outcome) {
      done = finished;
      const line = describeOutcomeLine(outcome);
      if (line !== undefined) io.stderr.write(`${line}\n`);
    },
    finish: stop,
  };
}
