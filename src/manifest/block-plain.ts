// The plain value of a manifest and where each part of it was written, read straight from plain
// block YAML without a parse tree: for a big manifest the tree is the largest thing the load makes
// (a 60 MB file's took 262 MB while the plain value and its places take about 70 MB).
//
// Only for text that interpolation would leave as it is (no `${`, nothing holding a secret): the
// result is then what the tree path (load-yaml.ts, interpolate.ts, plain-manifest.ts) makes of
// the same text. Anything else gives up, saying why, and the caller takes the tree path, which
// reports it: from the fast reader when only interpolation stood in the way, else the full parse.

import { registryOf, type SecretRegistry } from "../redact.js";
import type { Position } from "./diagnostics.js";
import { NodePlacesBuilder } from "./node-places.js";
import { type BlockBuilder, giveUp, readBlockYaml } from "./parse-block-yaml.js";
import { type PlainManifest, setKey } from "./plain-manifest.js";
import type { ScalarValue } from "./yaml-nodes.js";

interface PlainContainer {
  value: Record<string, unknown> | unknown[];
  /** Its number in the places. */
  place: number;
}

interface PlainSlot {
  container: PlainContainer;
  /** The key the value goes under; undefined for a list's item. */
  key: string | undefined;
  keyOffset: number;
}

/** Nodes the places first have room for (they grow as needed). */
const INITIAL_PLACES = 4096;

class PlainBuilder implements BlockBuilder<PlainContainer, PlainSlot> {
  root: unknown;
  /** Gave up on text that interpolation would change or refuse (not on the YAML). */
  interpolates = false;
  readonly places = new NodePlacesBuilder(INITIAL_PLACES);

  private readonly secrets: SecretRegistry;

  constructor(secretList: readonly string[]) {
    this.secrets = registryOf(secretList);
  }

  container(kind: "map" | "seq", offset: number, slot: PlainSlot | null): PlainContainer {
    const value = kind === "map" ? {} : [];
    const place = this.places.open(kind, offset, slot?.key, slot?.keyOffset ?? 0);
    this.put(slot, value);
    return { value, place };
  }

  scalar(value: ScalarValue, offset: number, _end: number, slot: PlainSlot): void {
    // Text that interpolation would change, or refuse, takes the tree path.
    if (typeof value === "string" && this.wouldInterpolate(value)) this.giveUpToInterpolation();
    this.places.close(this.places.open("scalar", offset, slot.key, slot.keyOffset));
    this.put(slot, value);
  }

  entrySlot(map: PlainContainer, key: string, keyOffset: number): PlainSlot {
    if (this.wouldInterpolate(key)) this.giveUpToInterpolation();
    return { container: map, key, keyOffset };
  }

  itemSlot(seq: PlainContainer): PlainSlot {
    return { container: seq, key: undefined, keyOffset: 0 };
  }

  end(container: PlainContainer): void {
    this.places.close(container.place);
  }

  private wouldInterpolate(text: string): boolean {
    return text.includes("${") || this.secrets.holds(text);
  }

  private giveUpToInterpolation(): never {
    this.interpolates = true;
    return giveUp();
  }

  private put(slot: PlainSlot | null, value: unknown): void {
    if (slot === null) {
      this.root = value;
      return;
    }
    const target = slot.container.value;
    if (Array.isArray(target)) target.push(value);
    else setKey(target, slot.key ?? "", value);
  }
}

/**
 * The plain manifest of `text`, when it is plain block YAML that interpolation with `secrets`
 * would leave as it is; `plain` is undefined for a text of only comments. Otherwise why not:
 * "interpolates" (interpolation would change or refuse some of it: the YAML may be plain block
 * YAML) or "not block YAML" (the fast reader gives up on it, for a tree as well).
 */
export function readBlockPlain(
  text: string,
  maxDepth: number,
  secrets: readonly string[],
):
  | { plain: PlainManifest | undefined; positionAt: (offset: number) => Position }
  | "interpolates"
  | "not block YAML" {
  if (text.includes("${")) return "interpolates";
  const builder = new PlainBuilder(secrets);
  const read = readBlockYaml(text, maxDepth, builder);
  if (read === undefined) return builder.interpolates ? "interpolates" : "not block YAML";
  const plain =
    builder.root === undefined
      ? undefined
      : { value: builder.root, locations: builder.places.finish(read.positionAt) };
  return { plain, positionAt: read.positionAt };
}
