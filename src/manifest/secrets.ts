// Recognises the API key inside manifest text, in every form src/redact.ts knows (as written,
// URL-encoded, JSON-escaped, hex, base64), so that the loader refuses it before a plan, comment or
// log could show it. (Redaction is SecretRegistry.redact, the one for all output.)

import { secretForms } from "../redact.js";

/**
 * Keys shorter than this are matched only as a whole value, not inside longer text. A real API key
 * is far longer; a short one (the emulator accepts any key) is also an ordinary word's part ("ro"
 * in "Property Filter"), and refusing every value that holds it would keep such records from being
 * managed at all. Whole-value matching still refuses `--var NAME=<key>` for any key.
 */
export const MIN_EMBEDDED_SECRET_LENGTH = 16;

/**
 * Whether `text` holds any of `secrets` in any of its forms: anywhere in it for a key of
 * MIN_EMBEDDED_SECRET_LENGTH characters or more, as the whole text for a shorter one.
 */
export function containsSecret(text: string, secrets: readonly string[]): boolean {
  for (const secret of secrets) {
    if (secret === "") continue;
    const forms = secretForms(secret);
    if (secret.length < MIN_EMBEDDED_SECRET_LENGTH) {
      if (forms.includes(text)) return true;
    } else if (forms.some((form) => text.includes(form))) {
      return true;
    }
  }
  return false;
}
