// Removes secrets (the API key) from any text before it can reach an error, a trace line or a log:
// the one place that decides what a leaked key looks like.

export const REDACTED = "[REDACTED]";

/** Turns text into text without the secrets it was built for. */
export type Redactor = (text: string) => string;

/**
 * Replaces every occurrence of each secret in `text`, also in its URL-encoded and JSON-escaped
 * forms, since a server may echo a header back inside a URL or a JSON string.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret === "") continue;
    for (const form of secretForms(secret)) result = result.split(form).join(REDACTED);
  }
  return result;
}

/** A redactor bound to the given secrets. */
export function createRedactor(secrets: readonly string[]): Redactor {
  const kept = secrets.filter((secret) => secret !== "");
  return (text) => redact(text, kept);
}

function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  // Longest first, so a longer form is not left half-replaced by a shorter one inside it.
  return [...forms].sort((a, b) => b.length - a.length);
}
