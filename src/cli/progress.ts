// Progress on stderr, only when stderr is a terminal: one line rewritten in place.

import type { CliIo } from "./cli-io.js";

export interface Progress {
  update(label: string, done: number, total: number, detail?: string): void;
  finish(): void;
}

/** Not in CI, whose log keeps every rewrite. */
export function showsProgressLine(io: CliIo): boolean {
  return io.stderr.isTTY === true && io.env.CI === undefined;
}

export function createProgress(io: CliIo): Progress {
  const enabled = showsProgressLine(io);
  let shown = false;
  let lastWrite = 0;
  return {
    update(label, done, total, detail) {
      if (!enabled) return;
      const now = Date.now();
      if (done < total && now - lastWrite < 80) return;
      lastWrite = now;
      io.stderr.write(`\r\u001b[2K${label} ${done}/${total}${detail === undefined ? "" : ` ${detail}`}`);
      shown = true;
    },
    finish() {
      if (shown) io.stderr.write("\r\u001b[2K");
      shown = false;
    },
  };
}
