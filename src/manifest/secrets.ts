// Recognises the API key inside manifest text, as written or in the encodings a value could carry
// it in, so that the loader refuses it before a plan, comment or log could show it.

/**
 * Keys shorter than this are matched only as a whole value, not inside longer text. A real API key
 * is far longer; a short one (the emulator accepts any key) is also an ordinary word's part ("ro"
 * in "Property Filter"), and refusing every value that holds it would keep such records from being
 * managed at all. Whole-value matching still refuses `--var NAME=<key>` for any key.
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 16;

/**
 * Whether `text` holds any of `secrets`, as is, URL-encoded, JSON-escaped, hex or base64: anywhere
 * in it for a key of MIN_EMBEDDED_SECRET_LENGTH characters or more, as the whole text for a shorter one.
 */
export function containsSecret(text: string, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const lower = text.toLowerCase();
  for (const secret of secrets) {
    if (secret === "") continue;
    const hex = Buffer.from(secret).toString("hex");
    if (secret.length < MIN_EMBEDDED_SECRET_LENGTH) {
      if (secretForms(secret).includes(text) || lower === hex) return true;
      continue;
    }
    for (const form of secretForms(secret)) if (text.includes(form)) return true;
    // Hex is case-free: both spellings decode to the key.
    if (lower.includes(hex)) return true;
  }
  return false;
}

/** Replaces each form of each secret in `text`: a last guard on messages built from manifest text. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret === "") continue;
    const forms = [...secretForms(secret), Buffer.from(secret).toString("hex")].sort(
      (a, b) => b.length - a.length,
    );
    for (const form of forms) result = result.split(form).join("[REDACTED]");
  }
  return result;
}

const formCache = new Map<string, string[]>();

function secretForms(secret: string): string[] {
  const cached = formCache.get(secret);
  if (cached !== undefined) return cached;
  const bytes = Buffer.from(secret);
  // Base64 of the key alone; inside longer data its alignment varies, and the whole groups of
  // each of the three alignments are what any base64 text holding the key must contain.
  const base64: string[] = [];
  for (let offset = 0; offset < 3 && offset < bytes.length; offset += 1) {
    const part = bytes.subarray(offset);
    const whole = Math.floor(part.length / 3) * 4;
    if (whole >= 8)
      base64.push(part.toString("base64").slice(0, whole), part.toString("base64url").slice(0, whole));
  }
  const forms = [
    ...new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), ...base64]),
  ].filter((form) => form !== "");
  formCache.set(secret, forms);
  return forms;
}
