// Documents that are read back (saved plans, JSON plans and results, exports) are written exactly,
// never redacted: one that holds the API key in any form is refused instead, naming where it is.

import { InputError } from "../input-error.js";
import type { SecretRegistry } from "../redact.js";

/** Throws a secret_in_output error if `text`, a document written exactly, holds the API key in any form. */
export function refuseSecretIn(
  text: string,
  what: string,
  locate: () => readonly string[],
  remedy: string,
  secrets: SecretRegistry,
): void {
  if (secrets.contains(text))
    throw new InputError("secret_in_output", {
      what: what,
      places: locate(),
      remedy: remedy,
      shortestSecret: secrets.shortestSecretLength,
    });
}
