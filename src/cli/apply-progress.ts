// What apply says while it runs, on stderr. On a terminal: one line rewritten in place, with the
// time left. Elsewhere (CI, a pipe, a log file): one line per finished change, and every 10 s a
// heartbeat with done/total, the time so far and the time left, so that a long apply is never
// silent. While the service's rate limit holds every request, both say so and for how long, and
// the time left counts it. The clock and the timer are injected, so tests need not wait.

import type { ApplyOutcome } from "../apply/types.js";
import {
  describeOutcomeLine,
  describePace,
  describeTiming,
  type ServicePause,
} from "../render/outcome-line.js";
import type { CliIo } from "./cli-io.js";
import { createProgress, showsProgressLine } from "./progress.js";

export const HEARTBEAT_MS = 10_000;
/** How often the terminal's line is redrawn while nothing finishes (a pause counting down). */
const REDRAW_MS = 1_000;

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
  options: {
    clock?: ApplyProgressClock;
    heartbeatMs?: number;
    /** Until when (the clock's time) the service's rate limit holds every request (the client's limiter). */
    pausedUntil?: () => number;
  } = {},
): ApplyProgress {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  let done = 0;
  let lastDoneAt = started;
  const elapsed = () => clock.now() - started;
  const pause = (): ServicePause | undefined => {
    const resumeInMs = (options.pausedUntil?.() ?? Number.NEGATIVE_INFINITY) - clock.now();
    return resumeInMs > 0 ? { resumeInMs, paceElapsedMs: lastDoneAt - started } : undefined;
  };
  const finished = (count: number) => {
    done = count;
    lastDoneAt = clock.now();
  };

  if (showsProgressLine(io)) {
    const line = createProgress(io);
    const draw = () =>
      line.update("applied", done, total, `changes, ${describeTiming(done, total, elapsed(), pause())}`);
    // Nothing finishes while the service holds requests: the line counts the pause down itself.
    const stopRedraw = clock.every(REDRAW_MS, () => {
      if (done < total && pause() !== undefined) draw();
    });
    return {
      onOutcome(count) {
        finished(count);
        draw();
      },
      finish: () => {
        stopRedraw();
        line.finish();
      },
    };
  }
  const stop = clock.every(options.heartbeatMs ?? HEARTBEAT_MS, () => {
    if (done < total) io.stderr.write(`Still applying: ${describePace(done, total, elapsed(), pause())}\n`);
  });
  return {
    onOutcome(count, _total, outcome) {
      finished(count);
      const line = describeOutcomeLine(outcome);
      if (line !== undefined) io.stderr.write(`${line}\n`);
    },
    finish: stop,
  };
}
