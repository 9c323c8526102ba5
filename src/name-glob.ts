// Record-name globs of `protect:`, `--target`, `--exclude` and `--allow-destroy`: `*` matches any
// run of characters (none included); every other character, `?`, `[` and `\` too, stands for itself.

/** A test for names matching any of `patterns`; no pattern matches nothing. */
export function matchesAnyGlob(patterns: readonly string[]): (name: string | null) => boolean {
  if (patterns.length === 0) return () => false;
  const expressions = patterns.map(globToRegExp);
  return (name) => name !== null && expressions.some((expression) => expression.test(name));
}

function globToRegExp(pattern: string): RegExp {
  const parts = pattern.split("*").map((part) => part.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"));
  return new RegExp(`^${parts.join("[\\s\\S]*")}$`, "u");
}
