// Collects what a renderer writes to a stream, for asserting on text output.

import { Writable } from "node:stream";

export function collectOutput(): { out: Writable; text: () => string } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { out, text: () => chunks.join("") };
}
