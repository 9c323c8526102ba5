// A record's name, in one place: its identity key (names that look the same to a reader are one
// name) and the globs of `protect:`, `--target`, `--exclude` and `--allow-destroy` over that key.

import { codePointLabel, trimAsService } from "./trim-as-service.js";

/**
 * Names that look the same to a reader: equal once trimmed as the service trims and put in
 * Unicode normalisation form C (an NFD "café" and an NFC "café" are one look-alike key).
 */
export function lookAlikeKey(name: string): string {
  return trimAsService(name).normalize("NFC");
}

/** Whether two names are one name to the identity rule; a record with no name looks like none. */
export function sameName(a: string | null, b: string | null): boolean {
  return a !== null && b !== null && lookAlikeKey(a) === lookAlikeKey(b);
}

/** The longest name a manifest's schema takes (schemas/manifest.schema.json), in characters. */
const MAX_NAME_LENGTH = 400;

/**
 * The first C0 control character or DEL in `text` (a manifest's names are one line of printable
 * text), as messages name it: `U+0009 at character 4`; undefined when there is none.
 */
export function controlCharacterIn(text: string): string | undefined {
  const characters = [...text];
  const index = characters.findIndex((character) => {
    const code = character.codePointAt(0) ?? 0;
    return code < 0x20 || code === 0x7f;
  });
  if (index < 0) return undefined;
  return `${codePointLabel(characters[index] ?? "")} at character ${index + 1}`;
}

/**
 * Why a manifest cannot hold `name` as a config's name (the schema's rule: not empty, no control
 * character), in words for a warning; undefined when it can.
 */
export function unmanifestableName(name: string): string | undefined {
  if (name === "") return "is empty";
  const length = [...name].length;
  if (length > MAX_NAME_LENGTH)
    return `is ${length} characters long, more than the ${MAX_NAME_LENGTH} a manifest's name may be`;
  const control = controlCharacterIn(name);
  return control === undefined ? undefined : `holds a control character (${control})`;
}

/** How two different names that share a look-alike key differ, in words for the plan. */
export function describeLookAlike(from: string, to: string): "white space" | "Unicode normalisation" {
  return trimAsService(from) === trimAsService(to) ? "white space" : "Unicode normalisation";
}

/** A compiled name glob: `*` matches any run of characters (none included), the rest stands for itself. */
export type NameGlob = (name: string | null) => boolean;

/**
 * A glob over record names, as the identity rule sees them: the glob matches a name when it spells
 * a look-alike of it: some text the glob spells is, once trimmed at its ends as the service trims,
 * canonically equivalent (NFC/NFD) to the name so trimmed. So `Billing` matches `Billing ` and an
 * NFD `café` matches an NFC one; `*` alone matches every name, and a record with no name (which
 * is matched as the empty name). Only `*` is special; nothing in a pattern can make it throw.
 * (Left out: combining marks that canonical ordering would move across the edge of a star's text.)
 *
 * Matching is a set-of-states walk over the pattern (no regular expression, no backtracking):
 * linear in the name for each pattern position, whatever the pattern holds.
 */
export function compileNameGlob(pattern: string): NameGlob {
  const matches = compileTokens(pattern);
  return (name) => matches(comparable(name));
}

/** The glob as a test of a name already made `comparable`. */
function compileTokens(pattern: string): (text: string) => boolean {
  const tokens = globTokens(pattern);
  // White space the service would trim may stand at either end of what the glob spells: a
  // leading run of `*` and white space may match nothing of the name, and so may a trailing one.
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

/** A test for names matching any of `patterns`; no pattern matches nothing. */
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

/**
 * The pattern as a list of code points (canonically decomposed, so that an `e` of the pattern
 * followed by `*` can spell the `é` of a name) and stars; a run of stars is one star.
 */
function globTokens(pattern: string): Token[] {
  const tokens: Token[] = [];
  pattern.split("*").forEach((literal, index) => {
    if (index > 0 && tokens.at(-1) !== STAR) tokens.push(STAR);
    for (const character of literal.normalize("NFD")) tokens.push(character);
  });
  return tokens;
}

/** A name as a glob sees it: trimmed as the service trims, canonically decomposed; none is empty. */
function comparable(name: string | null): string {
  return trimAsService(name ?? "").normalize("NFD");
}

/** A token that may stand for white space the service would trim: `*`, or a white space character. */
function trimmable(token: Token | undefined): boolean {
  return token === STAR || (token !== undefined && trimAsService(token) === "");
}
