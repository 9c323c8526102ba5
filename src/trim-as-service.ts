// The service's rule for its free-text fields, in one place: the real service's serializer
// (Django REST framework `CharField(trim_whitespace=True)`) stores `name` and `description` with
// Python's `str.strip()` applied. The emulator trims with it, the manifest refuses what it would
// trim, and every comparison of written text with a record goes through `showsText`.

/**
 * What Python's `str.strip()` with no argument strips: the characters `str.isspace()` accepts
 * (Unicode White_Space, bidirectional classes WS/B/S, and the C0 separators U+001C-U+001F).
 * Not JavaScript's `\s`: that takes U+FEFF and leaves U+001C-U+001F and U+0085.
 */
export const PYTHON_WHITE_SPACE =
  "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

const LEADING = new RegExp(`^[${PYTHON_WHITE_SPACE}]+`);
const TRAILING = new RegExp(`[${PYTHON_WHITE_SPACE}]+$`);

/** The fields the service trims. */
export const TRIMMED_FIELDS = ["name", "description"] as const;

export function isTrimmedField(field: string): field is (typeof TRIMMED_FIELDS)[number] {
  return (TRIMMED_FIELDS as readonly string[]).includes(field);
}

/** `text` as a trimming service stores it: Python's `text.strip()`. */
export function trimAsService(text: string): string {
  return text.replace(LEADING, "").replace(TRAILING, "");
}

/** The white space a trimming service would strip from `text`, at each end ("" where none). */
export function surroundingWhiteSpace(text: string): { leading: string; trailing: string } {
  return { leading: LEADING.exec(text)?.[0] ?? "", trailing: TRAILING.exec(text)?.[0] ?? "" };
}

/**
 * Whether a record showing `shown` holds the text `written`: as sent (a service that keeps it) or
 * as a trimming service stores it.
 */
export function showsText(written: string, shown: unknown): boolean {
  return shown === written || shown === trimAsService(written);
}

/** One character as `U+XXXX`, for messages about characters a reader cannot see. */
export function codePointLabel(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why `text` cannot be sent as written, and what to write instead; undefined when it can. */
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
