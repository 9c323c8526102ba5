// Splits the projects of a manifest among N independent workers (`--shard K/N`): a stable hash of
// the project id picks the shard, so a project stays with its worker as the manifest grows.

import { InputError } from "../input-error.js";

/** `index` counts from 1, as written on the command line. */
export interface ShardSpec {
  index: number;
  count: number;
}

// More shards than this is a typo, not a fleet; it also keeps K and N exact integers.
const MAX_SHARDS = 10_000;

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a of the id's UTF-8 bytes: fixed forever, as changing it would move projects between workers. */
export function shardOf(projectId: string, shardCount: number): number {
  if (!Number.isSafeInteger(shardCount) || shardCount < 1) {
    throw new RangeError(`shardCount must be a positive integer, not ${String(shardCount)}`);
  }
  let hash = FNV_OFFSET_BASIS;
  for (const byte of new TextEncoder().encode(projectId)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  // `>>> 0` reads the 32 bits as unsigned, so the remainder is never negative.
  return (hash >>> 0) % shardCount;
}

export function parseShard(text: string): ShardSpec {
  const usage = (message: string) => new InputError("usage", message);
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!match?.[1] || !match[2]) {
    throw usage(`--shard must be K/N, worker K of N counting from 1 (e.g. --shard 1/4), not "${text}"`);
  }
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > MAX_SHARDS) {
    throw usage(`--shard ${text.trim()}: the number of shards N must be between 1 and ${MAX_SHARDS}`);
  }
  if (index < 1 || index > count) {
    throw usage(
      `--shard ${text.trim()}: K must be between 1 and ${count} (shards count from 1, e.g. --shard 1/${count} to --shard ${count}/${count})`,
    );
  }
  return { index, count };
}

/** Items are project ids, or have one through `projectIdOf`, so a project's families stay together. */
export function selectShard<T>(
  items: readonly T[],
  shard: ShardSpec,
  projectIdOf: (item: T) => string = (item) => String(item),
): T[] {
  return items.filter((item) => shardOf(projectIdOf(item), shard.count) === shard.index - 1);
}
