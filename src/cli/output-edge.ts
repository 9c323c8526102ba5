// Where pcsync's output leaves the process: writers that show every form of the API key as
// [REDACTED], also split across two writes, and that notice a failing stream instead of crashing.

import { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { REDACTED, redactDeep, type SecretRegistry } from "../redact.js";

export type OutputStreamName = "stdout" | "stderr";

/** Nothing more is written to a stream that failed. */
export interface OutputLoss {
  stream: OutputStreamName;
  error: NodeJS.ErrnoException;
}

type Target = Writable & { isTTY?: boolean };

/** Keeps back only a write's end that could start a secret form; the rest passes at once, in order. */
export class RedactingWriter extends Writable {
  readonly #target: Target;
  readonly #registry: SecretRegistry;
  readonly #onRedacted: (count: number) => void;
  readonly #decoder = new StringDecoder("utf8");
  #held = "";
  #lost: NodeJS.ErrnoException | undefined;

  constructor(
    target: Target,
    registry: SecretRegistry,
    handlers: { onRedacted: (count: number) => void; onLost: (error: NodeJS.ErrnoException) => void },
  ) {
    super({ decodeStrings: false });
    this.#target = target;
    this.#registry = registry;
    this.#onRedacted = handlers.onRedacted;
    // Stays attached: a dead stream keeps failing every later write, and each failure is an
    // 'error' event that would otherwise crash the process with a stack trace.
    target.on("error", (error: NodeJS.ErrnoException) => {
      if (this.#lost !== undefined) return;
      this.#lost = error;
      this.#held = "";
      handlers.onLost(error);
    });
  }

  get isTTY(): boolean {
    return this.#target.isTTY === true;
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: () => void): void {
    const text = typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    this.#pass(this.#held + text, false);
    callback();
  }

  override _final(callback: () => void): void {
    this.flush();
    callback();
  }

  /** At the end of the output, a partial form is no secret. */
  flush(): void {
    this.#pass(this.#held + this.#decoder.end(), true);
  }

  #pass(text: string, final: boolean): void {
    const matches = this.#registry.matches(text);
    let cut = final ? text.length : this.#registry.incompleteSuffixStart(text);
    // A form that runs past the cut is kept back whole: the next write may make it longer.
    for (const match of matches) if (match.start < cut && match.end > cut) cut = match.start;
    let out = "";
    let position = 0;
    let count = 0;
    for (const match of matches) {
      if (match.end > cut) break;
      out += `${text.slice(position, match.start)}${REDACTED}`;
      position = match.end;
      count += 1;
    }
    out += text.slice(position, cut);
    this.#held = text.slice(cut);
    if (count > 0) this.#onRedacted(count);
    if (out !== "" && this.#lost === undefined) this.#target.write(out);
  }
}

export class OutputEdge {
  readonly stdout: RedactingWriter;
  readonly stderr: RedactingWriter;
  readonly registry: SecretRegistry;
  #redactions = 0;
  readonly losses: OutputLoss[] = [];
  /** A command that changes the service must not be left half done because nobody reads its output. */
  keepRunningFor: string | undefined;

  constructor(
    streams: { stdout: Target; stderr: Target },
    options: { registry: SecretRegistry; onLoss?: ((loss: OutputLoss) => void) | undefined },
  ) {
    this.registry = options.registry;
    const writer = (stream: OutputStreamName) =>
      new RedactingWriter(streams[stream], this.registry, {
        onRedacted: (count) => {
          this.#redactions += count;
        },
        onLost: (error) => {
          const loss = { stream, error };
          this.losses.push(loss);
          options.onLoss?.(loss);
        },
      });
    this.stdout = writer("stdout");
    this.stderr = writer("stderr");
  }

  redactText(text: string): string {
    const result = this.registry.redact(text);
    this.#redactions += result.count;
    return result.text;
  }

  /** Renderers shorten and diff long strings: a key cut in two would escape the writers. */
  redactForDisplay<T>(value: T): T {
    const result = redactDeep(value, this.registry);
    this.#redactions += result.count;
    return result.value;
  }

  finish(): void {
    this.stdout.flush();
    this.stderr.flush();
    if (this.#redactions > 0) {
      const times = this.#redactions === 1 ? "once" : `${this.#redactions} times`;
      this.stderr.write(
        `note: the API key's text appeared ${times} in the output and is shown as ${REDACTED}\n`,
      );
      this.#redactions = 0;
      this.stderr.flush();
    }
  }
}
