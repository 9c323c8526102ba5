// A record's name: its identity key (names that look the same to a reader are one name), and the
// globs of `protect:`, `--target`, `--exclude` and `--allow-destroy` over that key.

import { codePointLabel, trimAsService } from "./trim-as-service.js";

/** Trimmed as the service trims, in NFC: an NFD "café" and an NFC "café" are one key. */
export function lookAlikeKey(name: string): string {
  return trimAsService(name).normalize("NFC");
}

/** A record with no name looks like none. */
export function sameName(a: string | null, b: string | null): boolean {
  return a !== null && b !== null && lookAlikeKey(a) === lookAlikeKey(b);
}

/** As schemas/manifest.schema.json, in characters. */
const MAX_NAME_LENGTH = 400;

/** The first C0 control character or DEL, as messages name it: `U+0009 at character 4`. */
export function controlCharacterIn(text: string): string | undefined {
  const characters = [...text];
  const index = characters.findIndex((character) => {
    const code = character.codePointAt(0) ?? 0;
    return code < 0x20 || code === 0x7f;
  });
  if (index < 0) return undefined;
  return `${codePointLabel(characters[index] ?? "")} at character ${index + 1}`;
}

/** Why a manifest's schema cannot hold `name` as a config's name, in words for a warning. */
export function unmanifestableName(name: string): string | undefined {
  if (name === "") return "is empty";
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH)
    return `is ${length} characters long, more than the ${MAX_NAME_LENGTH} a manifest's name may be`;
  const control = controlCharacterIn(name);
  return control === undefined ? undefined : `holds a control character (${control})`;
}

export function describeLookAlike(from: string, to: string): "white space" | "Unicode normalisation" {
  return trimAsService(from) === trimAsService(to) ? "white space" : "Unicode normalisation";
}

export type NameGlob = (name: string | null) => boolean;

/**
 * Matches a name when some text it spells is a look-alike of it: `Billing` matches `Billing `, an NFD
 * `café` an NFC one, and `*` every name, a null one too. Only `*` is special; no pattern can throw.
 * (Left out: combining marks that canonical ordering would move across the edge of a star's text.)
 * A set-of-states walk, no backtracking: linear in the name for each pattern position.
 */
export function compileNameGlob(pattern: string): NameGlob {
  const matches = compileTokens(pattern);
  return (name) => matches(comparable(name));
}

/** Tests a name already made `comparable`. */
function compileTokens(pattern: string): (text: string) => boolean {
  const tokens = globTokens(pattern);
  // A leading or trailing run of `*` and white space the service would trim may match nothing.
  let startReach = 0;
  while (startReach < tokens.length && trimmable(tokens[startReach])) startReach += 1;
  let endReach = tokens.length;
  while (endReach > 0 && trimmable(tokens[endReach - 1])) endReach -= 1;
  return (text) => {
    // states[i]: the pattern's first i tokens can spell what was read so far.
    let states = new Uint8Array(tokens.length + 1);
    for (let i = 0; i <= startReach; i += 1) states[i] = 1;
    for (const character of text) {
      const next = new Uint8Array(tokens.length + 1);
      let any = false;
      for (let i = 0; i < tokens.length; i += 1) {
        if (states[i] !== 1) continue;
        const token = tokens[i];
        if (token === STAR) {
          next[i] = 1;
          next[i + 1] = 1;
          any = true;
        } else if (token === character) {
          next[i + 1] = 1;
          any = true;
        }
      }
      if (!any) return false;
      // A star may also match nothing: reaching it reaches the token after it.
      for (let i = 0; i < tokens.length; i += 1) if (next[i] === 1 && tokens[i] === STAR) next[i + 1] = 1;
      states = next;
    }
    for (let i = endReach; i <= tokens.length; i += 1) if (states[i] === 1) return true;
    return false;
  };
}

/** No pattern matches nothing. */
export function matchesAnyGlob(patterns: readonly string[]): NameGlob {
  if (patterns.length === 0) return () => false;
  const globs = patterns.map(compileTokens);
  return (name) => {
    const text = comparable(name);
    return globs.some((glob) => glob(text));
  };
}

const STAR = Symbol("*");
type Token = string | typeof STAR;

/** Code points, decomposed so that a pattern's `e*` can spell a name's `é`, and stars (a run is one). */
function globTokens(pattern: string): Token[] {
  const tokens: Token[] = [];
  pattern.split("*").forEach((literal, index) => {
    if (index > 0 && tokens.at(-1) !== STAR) tokens.push(STAR);
    for (const character of literal.normalize("NFD")) tokens.push(character);
  });
  return tokens;
}

function comparable(name: string | null): string {
  return trimAsService(name ?? "").normalize("NFD");
}

function trimmable(token: Token | undefined): boolean {
  return token === STAR || (token !== undefined && trimAsService(token) === "");
}
