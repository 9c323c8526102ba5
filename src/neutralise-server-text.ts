// Server text made safe to print: it cannot drive a terminal (controls, escapes), hide what a reader
// sees (bidi overrides, format characters), or be a CI workflow command (`::`, `##[`). JSON stays data.

// C0 controls, DEL, C1 controls, format characters (Cf), line and paragraph separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
// The same, with the tab left alone: kept in text of several lines (a module's indentation).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const UNSAFE_BUT_TAB = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
// What ends a line for a terminal or a runner: CR LF, CR, LF, VT, FF, NEL, LS, PS.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding line breaks is the point.
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/;
// What JSON strings, and YAML's double-quoted style, leave raw (both escape C0 controls): DEL, C1,
// format characters, separators.
const UNSAFE_IN_ESCAPED = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `\n`, `\u001b`, `\u202e`, `\u{e0041}`: the character named, never acted on. */
function escapeCharacter(character: string): string {
  const short = SHORT_ESCAPES[character];
  if (short !== undefined) return short;
  const code = character.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * Defuses what a runner reads as a command: the older parser acts on `##[` anywhere in a line, the
 * newer one on `::` at its start once white space is trimmed.
 */
function defuseCommands(line: string): string {
  return line.replace(/##\[/g, "#\\u0023[").replace(/^(\s*)::/u, "$1\\u003a:");
}

/** For one line (a name, an error's detail): every character visible. */
export function neutraliseInline(text: string): string {
  return defuseCommands(text.replace(UNSAFE, escapeCharacter));
}

/** For text of several lines (a log message, a module): each line as neutraliseInline, tabs kept. */
export function neutraliseLines(text: string): string[] {
  return text.split(LINE_BREAK).map((line) => defuseCommands(line.replace(UNSAFE_BUT_TAB, escapeCharacter)));
}

/** What JSON leaves raw, as JSON escapes: parsed, the same data. */
export function neutraliseJson(json: string): string {
  // Such characters and `##[` occur only inside strings: JSON's own syntax is plain ASCII. Each
  // UTF-16 code unit is escaped on its own (a character beyond U+FFFF as its surrogate pair).
  return json
    .replace(UNSAFE_IN_ESCAPED, (character) =>
      character.replace(/[\s\S]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`),
    )
    .replace(/##\[/g, "#\\u0023[");
}

// Anything neutraliseInline would change: then a YAML scalar must be written double-quoted.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const NEEDS_ESCAPES = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]|##\[/u;

/**
 * Whether a YAML scalar must be double-quoted for neutraliseYaml. (A line break inside a scalar is the
 * only way to start a line with `::` in YAML that pcsync writes; double-quoted, it is `\n`.)
 */
export function needsYamlEscapes(text: string): boolean {
  return NEEDS_ESCAPES.test(text);
}

/** For YAML whose scalars that needsYamlEscapes are double-quoted, unfolded: YAML's own escapes. */
export function neutraliseYaml(yaml: string): string {
  return yaml
    .replace(UNSAFE_IN_ESCAPED, (character) => {
      const code = character.codePointAt(0) ?? 0;
      return code > 0xffff
        ? `\\U${code.toString(16).padStart(8, "0")}`
        : `\\u${code.toString(16).padStart(4, "0")}`;
    })
    .replace(/##\[/g, "#\\x23[");
}

export function quoteServerText(text: string): string {
  return neutraliseJson(JSON.stringify(text));
}
