// Progress goes to stderr as one line rewritten in place, only on a terminal and never in CI.

import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/cli-io.js";
import { createProgress } from "../../src/cli/progress.js";
import { SecretRegistry } from "../../src/redact.js";

function ioWith(isTTY: boolean, env: Record<string, string> = {}): { io: CliIo; written: () => string } {
  const stderr = Object.assign(new PassThrough(), { isTTY });
  let written = "";
  stderr.on("data", (chunk: Buffer) => {
    written += chunk.toString("utf8");
  });
  return {
    io: { stdout: new PassThrough(), stderr, env, cwd: "/", secrets: new SecretRegistry() },
    written: () => written,
  };
}

describe("progress", () => {
  it("rewrites one line on a terminal and clears it when finished", () => {
    const { io, written } = ioWith(true);
    const progress = createProgress(io);
    progress.update("read", 0, 2, "projects (1/4 lists)");
    progress.update("read", 2, 2, "projects (4/4 lists)");
    progress.finish();
    expect(written()).toBe(
      "\r\u001b[2Kread 0/2 projects (1/4 lists)\r\u001b[2Kread 2/2 projects (4/4 lists)\r\u001b[2K",
    );
  });

  it("prints nothing when stderr is not a terminal, or in CI", () => {
    for (const { io, written } of [ioWith(false), ioWith(true, { CI: "true" })]) {
      const progress = createProgress(io);
      progress.update("applied", 1, 1, "changes");
      progress.finish();
      expect(written()).toBe("");
    }
  });
});
