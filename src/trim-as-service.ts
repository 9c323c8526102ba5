// The real service (DRF `CharField(trim_whitespace=True)`) stores `name` and `description` with Python's
// `str.strip()` applied: the emulator trims here, and every comparison goes through `showsText`.

/**
 * What `str.isspace()` accepts (White_Space, bidi classes WS/B/S, U+001C-U+001F). Not JavaScript's
 * `\s`: that takes U+FEFF and leaves U+001C-U+001F and U+0085.
 */
export const PYTHON_WHITE_SPACE =
  "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

const LEADING = new RegExp(`^[${PYTHON_WHITE_SPACE}]+`);
const TRAILING = new RegExp(`[${PYTHON_WHITE_SPACE}]+$`);

export const TRIMMED_FIELDS = ["name", "description"] as const;

export function isTrimmedField(field: string): field is (typeof TRIMMED_FIELDS)[number] {
  return (TRIMMED_FIELDS as readonly string[]).includes(field);
}

export function trimAsService(text: string): string {
  return text.replace(LEADING, "").replace(TRAILING, "");
}

export function surroundingWhiteSpace(text: string): { leading: string; trailing: string } {
  return { leading: LEADING.exec(text)?.[0] ?? "", trailing: TRAILING.exec(text)?.[0] ?? "" };
}

/** As sent (a service that keeps it) or as a trimming service stores it. */
export function showsText(written: string, shown: unknown): boolean {
  return shown === written || shown === trimAsService(written);
}

export function codePointLabel(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

export function describeUntrimmed(field: string, text: string): string | undefined {
  const { leading, trailing } = surroundingWhiteSpace(text);
  if (leading === "" && trailing === "") return undefined;
  const where = [leading === "" ? "" : "starts", trailing === "" ? "" : "ends"].filter(Boolean).join(" and ");
  const found = [...new Set([...leading, ...trailing])].map(codePointLabel).join(", ");
  const stored = trimAsService(text);
  const shown = stored.length > 60 ? `${JSON.stringify(stored.slice(0, 57))}...` : JSON.stringify(stored);
  const fix =
    stored === ""
      ? field === "name"
        ? "give it a name"
        : "write `description: null`, or leave it out"
      : `write ${shown}`;
  const block = /[\n\r]$/.test(text)
    ? " (a `|` or `>` block keeps its last line break: write `|-` or `>-`)"
    : "";
  return `${field} ${where} with white space (${found}); the service trims the ends of name and description, so it would store ${shown} and every plan would show a change: ${fix}${block}`;
}
