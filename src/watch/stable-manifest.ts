// Watch plans with the last manifest whose bytes stayed the same for --manifest-settle: a writer paused
// mid-file leaves a short list of configs that is still valid YAML, and `prune: true` would delete the rest.

import { createHash } from "node:crypto";
import { formatSeconds } from "../duration.js";
import { type LoadResult, readManifestSources, readVarFiles } from "../manifest/index.js";
import { monotonicNow } from "./monotonic-clock.js";

/** Ten seconds: longer than any pause of a writer that is still writing, short beside an interval. */
export const DEFAULT_MANIFEST_SETTLE_MS = 10_000;

/** How often per --manifest-settle a change not yet stable is read again between cycles. */
const SAMPLES_PER_WAIT = 4;

export interface ManifestReader {
  load(): Promise<LoadResult>;
  /** A digest of what load would read now: the files' names and bytes, and any read error. */
  digest(): Promise<string>;
}

export interface StableManifestOptions {
  /** 0: a changed manifest is used as read. */
  stableForMs: number;
  /** --once: the files are used as read, without reading them for a digest too. */
  once?: boolean;
  notice: (line: string) => void;
  /** The monotonic clock (tests); `nextCheckAt()` answers on it, as the loop's clock must be. */
  now?: () => number;
}

export async function digestManifestFiles(
  files: readonly string[],
  varFiles: readonly string[],
  cwd: string,
): Promise<string> {
  const hash = createHash("sha256");
  const [manifests, vars] = await Promise.all([readManifestSources(files, cwd), readVarFiles(varFiles, cwd)]);
  // Lengths before texts: no two different sets of files can give the same stream of bytes.
  for (const source of [...manifests.sources, ...vars.sources]) {
    hash.update(`${source.file.length}:${source.file}${source.text.length}:`).update(source.text);
  }
  // A file missing, unreadable or not text is a state of its own (a file deleted, then re-created).
  for (const problem of [...manifests.errors, ...vars.errors])
    hash.update(`!${problem.file}:${problem.message}\n`);
  return hash.digest("hex");
}

/** Between cycles, `nextCheckAt()` and `check()` let the loop start a cycle once a change is stable. */
export class StableManifest {
  readonly #reader: ManifestReader;
  readonly #options: StableManifestOptions;
  readonly #now: () => number;
  #stable: { digest: string | undefined; result: LoadResult } | undefined;
  /** A content that differs from the stable one, and since when every read has found it. */
  #candidate: { digest: string; since: number; lastRead: number } | undefined;
  #told = false;
  /** The change a cycle last tried to take up: early checks do not start another cycle for it. */
  #tried: string | undefined;

  constructor(reader: ManifestReader, options: StableManifestOptions) {
    this.#reader = reader;
    this.#options = options;
    this.#now = options.now ?? monotonicNow;
  }

  get pending(): boolean {
    return this.#candidate !== undefined;
  }

  /** The first is used as read (the operator has just started the watcher, as they would run apply). */
  async current(): Promise<LoadResult> {
    if (this.#options.once === true) return this.#reader.load();
    if (this.#stable === undefined) return this.#first();
    const digest = await this.#reader.digest();
    this.#observe(digest);
    const candidate = this.#candidate;
    if (candidate === undefined) return this.#stable.result;
    if (this.#now() - candidate.since >= this.#options.stableForMs) {
      // Should the load fail (it throws, or the content moves under it), the next interval's cycle
      // tries again: checks between cycles do not start cycle after cycle for it.
      this.#tried = candidate.digest;
      const result = await this.#reader.load();
      const after = await this.#reader.digest();
      // Read the same before and after the load: the load read that content, and no other.
      if (after === candidate.digest) {
        this.#stable = { digest: after, result };
        this.#candidate = undefined;
        this.#told = false;
        const stableForMs = this.#options.stableForMs;
        this.#options.notice(
          `the manifest changed; using the new version (${stableForMs > 0 ? `unchanged for ${formatSeconds(stableForMs)}` : "as read: --manifest-settle 0"})`,
        );
        return result;
      }
      this.#observe(after);
    }
    if (!this.#told && this.#candidate !== undefined) {
      this.#told = true;
      this.#options.notice(
        `the manifest changed; planning with the last settled version until its content stays the same for ${formatSeconds(this.#options.stableForMs)}`,
      );
    }
    return this.#stable.result;
  }

  nextCheckAt(): number | undefined {
    const candidate = this.#candidate;
    if (candidate === undefined || candidate.digest === this.#tried) return undefined;
    const stableForMs = this.#options.stableForMs;
    const due = candidate.since + stableForMs;
    return Math.min(due, candidate.lastRead + Math.max(1, Math.ceil(stableForMs / SAMPLES_PER_WAIT)));
  }

  /** True when a change is now stable, so that a cycle should use it. */
  async check(): Promise<boolean> {
    const candidate = this.#candidate;
    if (candidate === undefined) return false;
    try {
      this.#observe(await this.#reader.digest());
    } catch {
      // Not read this time: the next check comes a sample later, and the cycle reads it anyway.
      candidate.lastRead = this.#now();
      return false;
    }
    const now = this.#candidate;
    return (
      now !== undefined && now.digest !== this.#tried && this.#now() - now.since >= this.#options.stableForMs
    );
  }

  async #first(): Promise<LoadResult> {
    const before = await this.#reader.digest();
    const result = await this.#reader.load();
    const after = await this.#reader.digest();
    // Written while read: used all the same, but the version the writer leaves replaces it once stable.
    this.#stable = { digest: before === after ? after : undefined, result };
    if (before !== after) this.#candidate = { digest: after, since: this.#now(), lastRead: this.#now() };
    return result;
  }

  #observe(digest: string): void {
    const now = this.#now();
    if (digest === this.#stable?.digest) {
      // Back to the stable content (the writer put it back, or rewrote it the same).
      this.#candidate = undefined;
      this.#told = false;
      return;
    }
    if (this.#candidate?.digest === digest) this.#candidate.lastRead = now;
    else this.#candidate = { digest, since: now, lastRead: now };
  }
}
