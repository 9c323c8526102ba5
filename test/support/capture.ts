// Streams that keep what is written to them, for asserting on what a renderer or a command wrote.

import { PassThrough } from "node:stream";

export interface CapturedOutput {
  out: PassThrough;
  /** What was written so far. */
  text(): string;
}

export function captureOutput(): CapturedOutput {
  const out = new PassThrough();
  let text = "";
  out.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { out, text: () => text };
}

export interface CapturedStreams {
  stdout: PassThrough;
  stderr: PassThrough;
  /** What was written so far. */
  text(): { stdout: string; stderr: string };
}

export function captureStreams(): CapturedStreams {
  const stdout = captureOutput();
  const stderr = captureOutput();
  return {
    stdout: stdout.out,
    stderr: stderr.out,
    text: () => ({ stdout: stdout.text(), stderr: stderr.text() }),
  };
}
