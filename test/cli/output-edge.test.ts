// The output edge: the writers redact at write time, also a key split across two writes, keep
// back nothing that cannot be a key, and survive a stream that fails.

import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { OutputEdge, type OutputLoss } from "../../src/cli/output-edge.js";
import { REDACTED, SecretRegistry } from "../../src/redact.js";
import { captureStreams } from "../support/capture.js";

const KEY = "phx_Reliability+Key/0123456789=abcdefXYZ";

function edgeFor(keys: string[], onLoss?: (loss: OutputLoss) => void) {
  const registry = new SecretRegistry();
  for (const key of keys) registry.register(key);
  const streams = captureStreams();
  const edge = new OutputEdge(
    { stdout: streams.stdout, stderr: streams.stderr },
    { registry, ...(onLoss ? { onLoss } : {}) },
  );
  return { edge, out: () => streams.text().stdout, err: () => streams.text().stderr };
}

describe("redaction at write time", () => {
  it("catches a key split across two writes, at every split point", () => {
    const encoded = Buffer.from(`Bearer ${KEY}`).toString("base64");
    for (const secretText of [KEY, encoded]) {
      for (let split = 1; split < secretText.length; split += 1) {
        const { edge, out } = edgeFor([KEY]);
        edge.stdout.write(`a ${secretText.slice(0, split)}`);
        // Nothing of the key goes out before the write that completes it ("Bearer " may).
        if (secretText === KEY) expect(out()).toBe("a ");
        else expect(out()).not.toMatch(/QmVhcmVyIH\w{6}/);
        edge.stdout.write(`${secretText.slice(split)} b\n`);
        expect(out()).not.toContain(KEY.slice(0, 12));
        expect(out()).toMatch(/^a .*\[REDACTED\].* b\n$/);
        edge.finish();
      }
    }
  });

  it("keeps back nothing that cannot start the key, so progress and prompts show at once", () => {
    const { edge, out } = edgeFor([KEY]);
    edge.stdout.write("\rread 3/8 projects (7/16 lists)");
    expect(out()).toBe("\rread 3/8 projects (7/16 lists)");
    edge.stdout.write("plan: 2 to create");
    expect(out()).toMatch(/plan: 2 to create$/);
    edge.stdout.write(" (ph");
    expect(out()).toMatch(/plan: 2 to create \($/);
    edge.stdout.write("ase 2)\n");
    expect(out()).toMatch(/plan: 2 to create \(phase 2\)\n$/);
  });

  it("writes out a kept-back partial key at the end, and notes the redactions once", () => {
    const { edge, out, err } = edgeFor(["ro"]);
    edge.stdout.write("P");
    edge.stdout.write("roperty Filter\nends with r");
    expect(out()).toBe(`P${REDACTED}perty Filter\nends with `);
    edge.finish();
    expect(out()).toBe(`P${REDACTED}perty Filter\nends with r`);
    expect(err()).toBe(`note: the API key's text appeared once in the output and is shown as ${REDACTED}\n`);
  });

  it("redacts and counts what goes to files and renderers through the edge", () => {
    const { edge, err } = edgeFor([KEY]);
    expect(edge.redactText(`summary ${KEY}`)).toBe(`summary ${REDACTED}`);
    const data = { name: `a ${KEY}`, from: undefined, nested: [KEY, 3] };
    const shown = edge.redactForDisplay(data);
    expect(shown).toEqual({ name: `a ${REDACTED}`, from: undefined, nested: [REDACTED, 3] });
    expect(Object.hasOwn(shown, "from")).toBe(true);
    expect(data.name).toBe(`a ${KEY}`);
    edge.finish();
    expect(err()).toContain("appeared 3 times");
  });

  it("says nothing when nothing was redacted", () => {
    const { edge, err } = edgeFor([KEY]);
    edge.stdout.write("no secret here\n");
    edge.finish();
    expect(err()).toBe("");
  });
});

describe("a stream that fails", () => {
  it("is reported once, and later writes are dropped instead of crashing", () => {
    const losses: OutputLoss[] = [];
    const failing = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error("no space left on device"), { code: "ENOSPC" }));
      },
    });
    const stderr = new PassThrough();
    const edge = new OutputEdge(
      { stdout: failing, stderr },
      { registry: new SecretRegistry(), onLoss: (loss) => losses.push(loss) },
    );
    edge.stdout.write("first\n");
    return new Promise<void>((resolve) => {
      setImmediate(() => {
        edge.stdout.write("second\n");
        setImmediate(() => {
          expect(losses).toHaveLength(1);
          expect(losses[0]?.stream).toBe("stdout");
          expect(losses[0]?.error.code).toBe("ENOSPC");
          expect(edge.losses).toHaveLength(1);
          resolve();
        });
      });
    });
  });
});
