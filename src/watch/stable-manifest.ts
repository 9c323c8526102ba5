// Which manifest a long-running watch plans with: the last version whose content (the bytes of
// every file, not their times) stayed the same for --manifest-settle. A writer that pauses
// mid-file (a slow copy, a network file system, an editor saving in place) leaves a short list of
// configs that is still valid YAML; used, `prune: true` would delete the rest.

import { createHash } from "node:crypto";
import { formatSeconds } from "../duration.js";
import { type LoadResult, readManifestSources, readVarFiles } from "../manifest/index.js";
import { monotonicNow } from "./monotonic-clock.js";

/** Ten seconds: longer than any pause of a writer that is still writing, short beside an interval. */
export const DEFAULT_MANIFEST_SETTLE_MS = 10_000;

/** How often a change not yet stable is read again between cycles: a few times per --manifest-settle. */
const SAMPLES_PER_WAIT = 4;

export interface ManifestReader {
  /** Loads (reads, parses, validates) the manifest as it is now. */
  load(): Promise<LoadResult>;
  /** A digest of what load would read now: the files' names and bytes, and any read error. */
  digest(): Promise<string>;
}

export interface StableManifestOptions {
  /** A changed content is used once it has been read the same for this long (0: as read). */
  stableForMs: number;
  /** One cycle only (--once): the files are used as read, without reading them for a digest too. */
  once?: boolean;
  /** Says, once per stretch, that a changed manifest is not used yet, and when one is. */
  notice: (line: string) => void;
  /** The monotonic clock (tests); `nextCheckAt()` answers on it, as the loop's clock must be. */
  now?: () => number;
}

/** The digest of the manifest files and var files the flags name, as `loadManifests` would read them. */
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

/**
 * Remembers the stable manifest and the change that may replace it. `current()` is what a cycle
 * plans with; between cycles, `nextCheckAt()` and `check()` let the loop read a change again until
 * it is stable, and start a cycle then rather than an interval later.
 */
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

  /** A change is waiting to become stable. */
  get pending(): boolean {
    return this.#candidate !== undefined;
  }

  /**
   * The manifest a cycle uses. The first one is used as read (the operator has just started the
   * watcher, as they would run apply); after that, a changed one only once it is stable.
   */
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

  /** When the loop should read a change again (undefined: no change is waiting). */
  nextCheckAt(): number | undefined {
    const candidate = this.#candidate;
    if (candidate === undefined || candidate.digest === this.#tried) return undefined;
    const stableForMs = this.#options.stableForMs;
    const due = candidate.since + stableForMs;
    return Math.min(due, candidate.lastRead + Math.max(1, Math.ceil(stableForMs / SAMPLES_PER_WAIT)));
  }

  /** Reads the files again; true when a change is now stable, so that a cycle should use it. */
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
    // A change now stable that no cycle has tried yet.
    const now = this.#candidate;
    return (
      now !== undefined && now.digest !== this.#tried && this.#now() - now.since >= this.#options.stableForMs
    );
  }

  async #first(): Promise<LoadResult> {
    const before = await this.#reader.digest();
    const result = await this.#reader.load();
    const after = await this.#reader.digest();
    // Written while it was read: used all the same, but remembered as no content read since, so
    // that the version the writer leaves replaces it once it is stable.
    this.#stable = { digest: before === after ? after : undefined, result };
    if (before !== after) this.#candidate = { digest: after, since: this.#now(), lastRead: this.#now() };
    return result;
  }

  /** Takes in one read: the stable content, the change not yet stable, or a new change. */
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
