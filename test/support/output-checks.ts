// Checks that any output a user sees must pass: no API key, no stack trace.

/** Throws if the key shows in either stream. */
export function expectNoSecret(run: { stdout: string; stderr: string }, key: string): void {
  for (const text of [run.stdout, run.stderr]) {
    if (text.includes(key)) throw new Error(`output contains the API key:\n${text}`);
  }
}

/** No stack trace in user-facing output. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+:\d+:\d+\)?/.test(text);
}

/** stderr without the lines that name an apply's journal (said at the end of every journaled run). */
function withoutJournalNote(stderr: string): string {
  return stderr.replace(/^Journal: .*\n(?: {2}.*\n)*/m, "");
}

/**
 * stderr of an apply without its log of finished changes (one line each, without a terminal) and
 * the note naming its journal: what is left are warnings and errors.
 */
export function withoutOutcomeLines(stderr: string): string {
  return withoutJournalNote(stderr).replace(
    /^(?:created|updated|adopted|deleted|reordered|failed to \w+|skipped the|unknown outcome of|Still applying:) .*\n/gm,
    "",
  );
}
