// The API key goes into an Authorization header as is: only visible ASCII can, so anything else
// is refused (never shown) before a request is made.

import { InputError } from "../input-error.js";

const VALID_KEY = /^[\x21-\x7e]+$/;

export function isValidApiKey(key: string): boolean {
  return VALID_KEY.test(key);
}

/** `source`: where the key came from, for the error. */
export function checkApiKey(key: string, source: string): string {
  if (!isValidApiKey(key)) {
    throw new InputError("api_key_invalid", {
      source: source,
      reason: "contains spaces, line breaks or non-ASCII characters; it must hold the key alone",
    });
  }
  return key;
}
