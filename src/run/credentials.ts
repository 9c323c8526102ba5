// The API key, from PCSYNC_API_KEY or a key file (never a command-line value): errors name the source,
// never its content, and a key once read is a secret of the run, which no output shows.

import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { checkApiKey, isValidApiKey } from "../api/api-key.js";
import { InputError } from "../input-error.js";
import { MIN_SECRET_LENGTH, type SecretRegistry } from "../redact.js";

export const API_KEY_ENV = "PCSYNC_API_KEY";

export interface ApiKeySources {
  env: Readonly<Record<string, string | undefined>>;
  /** Wins over the environment: it was asked for explicitly. */
  keyFile?: string | undefined;
  /** Of a relative `keyFile`; messages name it as given. */
  cwd?: string | undefined;
}

export async function resolveApiKey(sources: ApiKeySources, secrets: SecretRegistry): Promise<string> {
  const fromEnv = sources.env[API_KEY_ENV]?.trim();
  let key: string;
  if (sources.keyFile !== undefined)
    key = checkApiKey(await readKeyFile(sources.keyFile, sources.cwd), `file ${sources.keyFile}`);
  else if (fromEnv === undefined) throw new InputError("api_key_missing", {});
  else if (fromEnv === "")
    throw new InputError("api_key_invalid", {
      source: API_KEY_ENV,
      reason: "is empty; set it to the key, or unset it and use --api-key-file",
    });
  else key = checkApiKey(fromEnv, API_KEY_ENV);
  secrets.register(key);
  return key;
}

/** The manifest loader reads it too, to refuse values holding the key before any connection is made. */
export async function readKeyFile(file: string, cwd: string | undefined): Promise<string> {
  let content: string;
  try {
    content = await readFile(cwd === undefined ? file : resolve(cwd, file), "utf8");
  } catch (error) {
    throw new InputError("api_key_file", { file: file, reason: describeReadFailure(error) });
  }
  const key = content.trim();
  if (key === "")
    throw new InputError("api_key_file", { file: file, reason: "is empty; write the API key into it" });
  return key;
}

/**
 * A valid key whole, else each word of MIN_SECRET_LENGTH or more (`Bearer <key>`, two keys) and the
 * whole text (a webhook secret may hold white space). The environment's key is registered before any
 * command runs: a manifest may interpolate it into a value an error quotes before the key is read.
 */
export function registerSecretWords(text: string, secrets: SecretRegistry): void {
  const key = text.trim();
  if (isValidApiKey(key)) {
    secrets.register(key);
    return;
  }
  if (key.length >= MIN_SECRET_LENGTH) secrets.register(key);
  for (const word of key.split(/\s+/)) if (word.length >= MIN_SECRET_LENGTH) secrets.register(word);
}

const READ_FAILURES: Readonly<Record<string, string>> = {
  ENOENT: "does not exist; check the path given to --api-key-file",
  EACCES: "cannot be read (permission denied)",
  EPERM: "cannot be read (permission denied)",
  EISDIR: "is a directory, not a file holding the key",
};

function describeReadFailure(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  return READ_FAILURES[code] ?? `cannot be read (${code || "unknown error"})`;
}
