// What apply says on stderr while it runs: on a terminal, one line rewritten in place; elsewhere, a
// line per finished change and a heartbeat every 10 s, so that a long apply is never silent.

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
/** The terminal's line is redrawn while nothing finishes: a pause counting down. */
const REDRAW_MS = 1_000;

export interface ApplyProgressClock {
  now: () => number;
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
    /** Until when the service's rate limit holds every request (the client's limiter). */
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
  const stop = clock.every(HEARTBEAT_MS, () => {
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
